#include "torchscope/gui/PanelFields.h"

#include <fmt/format.h>

#include <algorithm>

#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"

namespace torchscope::gui {

namespace {

class Fields {
 public:
  Fields& add(std::string name, std::string value) {
    fields_.push_back({std::move(name), std::move(value)});
    return *this;
  }
  Fields& add(std::string name, const char* value) { return add(std::move(name), std::string(value)); }
  Fields& add(std::string name, std::int64_t value) { return add(std::move(name), std::to_string(value)); }
  Fields& add(std::string name, bool value) { return add(std::move(name), std::string(value ? "yes" : "no")); }
  Fields& add(std::string name, double value) { return add(std::move(name), fmt::format("{:g}", value)); }
  Fields& time(std::string name, Nanos value, Nanos origin) {
    return add(std::move(name), fmt::format("{} ns (+{})", value, formatDuration(base::saturatingSub(value, origin))));
  }
  Fields& source(std::string_view file, std::int64_t line) {
    const std::string location = sourceLocation(file, line);
    return location.empty() ? *this : add("source", location);
  }
  std::vector<Field> take() { return std::move(fields_); }

 private:
  std::vector<Field> fields_;
};

void addRecord(Fields& f, const store::Step& r) {
  f.add("pid", r.pid).add("tid", r.tid).add("index", r.index).add("source", r.source);
}
void addRecord(Fields& f, const store::Sync& r) {
  f.source(r.file, r.line);
  f.add("pid", r.pid).add("tid", r.tid).add("sync_kind", r.sync_kind).add("origin", r.origin).add("op", r.op);
  f.add("stream", r.stream).add("correlation_id", r.correlation_id).add("file", r.file).add("line", r.line);
  f.add("function", r.function).add("stack", r.stack);
}
void addRecord(Fields& f, const store::Compile& r) {
  f.source(r.co_filename, r.co_firstlineno);
  f.add("pid", r.pid).add("frame_id", r.frame_id).add("frame_compile_id", r.frame_compile_id);
  f.add("attempt", r.attempt).add("compiled_autograd_id", r.compiled_autograd_id).add("co_name", r.co_name);
  f.add("co_filename", r.co_filename).add("co_firstlineno", r.co_firstlineno);
  const auto phase = [](Nanos ns) { return ns < 0 ? std::string("-") : formatDuration(ns); };
  f.add("dynamo", phase(r.dynamo_ns)).add("aot", phase(r.aot_ns)).add("inductor", phase(r.inductor_ns));
  f.add("graph_count", r.graph_count).add("graph_op_count", r.graph_op_count);
  f.add("graph_node_count", r.graph_node_count).add("guard_count", r.guard_count).add("cache_size", r.cache_size);
  f.add("cache_hit", r.cache_hit).add("status", r.status).add("fail_type", r.fail_type);
  f.add("fail_reason", r.fail_reason).add("restart_reasons", r.restart_reasons);
}
void addRecord(Fields& f, const store::GraphBreak& r) {
  f.source(r.file, r.line);
  f.add("pid", r.pid).add("frame_id", r.frame_id).add("frame_compile_id", r.frame_compile_id);
  f.add("attempt", r.attempt).add("break_type", r.break_type).add("reason", r.reason);
  f.add("explanation", r.explanation).add("hints", r.hints).add("file", r.file).add("line", r.line);
  f.add("function", r.function).add("user_stack", r.user_stack);
}
void addRecord(Fields& f, const store::Recompile& r) {
  f.source(r.co_filename, r.co_firstlineno);
  f.add("pid", r.pid).add("frame_id", r.frame_id).add("frame_compile_id", r.frame_compile_id);
  f.add("co_name", r.co_name).add("co_filename", r.co_filename).add("co_firstlineno", r.co_firstlineno);
  f.add("guard_failures", r.guard_failures).add("cause", r.cause).add("cache_size", r.cache_size);
  f.add("limit_hit", r.limit_hit);
}

template <class Record>
void addRow(Fields& fields, std::string_view table, const std::vector<Record>& rows, std::int64_t index) {
  fields.add("table", std::string(table));
  if (index >= 0 && static_cast<std::size_t>(index) < rows.size()) addRecord(fields, rows[static_cast<std::size_t>(index)]);
}

}  // namespace

std::string_view tableOf(RecordKind kind) {
  switch (kind) {
    case RecordKind::kStep: return "steps";
    case RecordKind::kNvtx: return "nvtx";
    case RecordKind::kCpuOp: return "cpu_ops";
    case RecordKind::kApiCall: return "api_calls";
    case RecordKind::kSync: return "syncs";
    case RecordKind::kKernel: return "kernels";
    case RecordKind::kMemcpy: return "memcpy";
    case RecordKind::kMemset: return "memset";
    case RecordKind::kCompile: return "compiles";
    case RecordKind::kGraphBreak: return "graph_breaks";
    case RecordKind::kRecompile: return "recompiles";
  }
  return "";
}

std::vector<Field> describe(const Timeline& timeline, const SliceRef& ref) {
  const Slice& slice = ref.slice;
  const Records& r = timeline.records;
  Fields fields;
  fields.add("label", timeline.name(slice));
  fields.time("start", slice.start_ns, timeline.begin_ns);
  fields.time("end", slice.end_ns, timeline.begin_ns);
  fields.add("duration", formatDuration(slice.duration()));
  switch (slice.kind) {
    case RecordKind::kStep: addRow(fields, "steps", r.steps, slice.row); break;
    case RecordKind::kSync: addRow(fields, "syncs", r.syncs, slice.row); break;
    case RecordKind::kCompile: addRow(fields, "compiles", r.compiles, slice.row); break;
    case RecordKind::kGraphBreak: addRow(fields, "graph_breaks", r.graph_breaks, slice.row); break;
    case RecordKind::kRecompile: addRow(fields, "recompiles", r.recompiles, slice.row); break;
    default: fields.add("table", std::string(tableOf(slice.kind))).add("id", slice.row); break;
  }
  return fields.take();
}

std::vector<Field> describe(const analyzer::Finding& finding) {
  // The fields as the store holds them (analyzer::findingRecord): the panel names the store's columns.
  const store::Finding row = analyzer::findingRecord(finding);
  Fields fields;
  fields.add("table", "findings").source(row.file, row.line);
  fields.add("rule", row.rule).add("severity", row.severity).add("title", row.title);
  fields.add("message", row.message).add("file", row.file).add("line", row.line);
  fields.add("function", row.function).add("count", row.count);
  fields.add("impact_seconds", row.impact_seconds).add("impact_fraction", row.impact_fraction);
  fields.add("evidence", row.evidence).add("fix_id", row.fix_id).add("fix_summary", row.fix_summary);
  fields.add("fix_kind", row.fix_kind);
  return fields.take();
}

FindingsTable::FindingsTable(std::vector<analyzer::Finding> findings) : findings_(std::move(findings)) {
  std::stable_sort(findings_.begin(), findings_.end(), [](const analyzer::Finding& a, const analyzer::Finding& b) {
    return a.impact_seconds > b.impact_seconds;
  });
}

std::string FindingsTable::header(int column) {
  switch (column) {
    case kSeverity: return "Severity";
    case kRule: return "Rule";
    case kTitle: return "Title";
    case kLocation: return "Source";
    case kImpact: return "Impact";
    default: return {};
  }
}

std::string FindingsTable::cell(std::size_t row, int column) const {
  if (row >= findings_.size()) return {};
  const analyzer::Finding& finding = findings_[row];
  switch (column) {
    case kSeverity: return std::string(analyzer::severityName(finding.severity));
    case kRule: return std::string(finding.rule.text());
    case kTitle: return finding.title;
    case kLocation: return sourceLocation(baseName(finding.file), finding.line);
    case kImpact:
      return fmt::format("{} ({:.1f}%)", formatDuration(base::saturatingCast(finding.impact_seconds * 1e9)),
                         finding.impact_fraction * 100);
    default: return {};
  }
}

}  // namespace torchscope::gui
