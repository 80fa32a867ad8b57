#include "torchscope/gui/PanelFields.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"

namespace torchscope::gui {

namespace {

// An empty text, list or object: what the store writes where it has nothing to say.
bool saysNothing(std::string_view value) { return value.empty() || value == "[]" || value == "{}"; }

// "file:line in function" for each frame of the store's stack JSON (innermost last there), innermost first.
std::string readableStack(std::string_view json) {
  if (json.empty()) return {};
  const nlohmann::json frames = base::parseJson(json);
  if (!frames.is_array()) return std::string(json);
  std::string text;
  for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame) {
    if (!frame->is_object()) continue;
    const std::string file = frame->value("file", std::string());
    const std::int64_t line = frame->value("line", std::int64_t{-1});
    const std::string function = frame->value("function", std::string());
    text += (text.empty() ? "" : "  <  ") + sourceLocation(baseName(file), line);
    if (!function.empty()) text += " in " + function;
  }
  return text;
}

// The fields as a person reads them: words for names, times from the run's start, and nothing for what the store
// keeps only for its own joins or does not know (-1, empty).
class Fields {
 public:
  Fields& add(std::string name, std::string value) {
    if (!saysNothing(value)) fields_.push_back({std::move(name), std::move(value)});
    return *this;
  }
  Fields& add(std::string name, const char* value) { return add(std::move(name), std::string(value)); }
  Fields& add(std::string name, std::int64_t value) { return add(std::move(name), std::to_string(value)); }
  // A count, id or number the store writes as -1 when it is unknown.
  Fields& known(std::string name, std::int64_t value) { return value < 0 ? *this : add(std::move(name), value); }
  Fields& yesNo(std::string name, std::int64_t value) {  // 1, 0, or -1 for unknown
    return value < 0 ? *this : add(std::move(name), std::string(value != 0 ? "yes" : "no"));
  }
  Fields& duration(std::string name, Nanos ns) { return ns < 0 ? *this : add(std::move(name), formatDuration(ns)); }
  Fields& source(std::string_view file, std::int64_t line) { return add("source", sourceLocation(file, line)); }
  Fields& stack(std::string_view json) { return add("Python stack", readableStack(json)); }
  std::vector<Field> take() { return std::move(fields_); }

 private:
  std::vector<Field> fields_;
};

// torch's own notation of a compile: frame/compile of the frame, "_attempt" after a restart, "!autograd/" before
// it under compiled autograd ("[0/1]", "[!0/2/0_1]" in TORCH_LOGS).
std::string compileId(std::int64_t autograd_id, std::int64_t frame_id, std::int64_t frame_compile_id,
                      std::int64_t attempt) {
  if (frame_id < 0 || frame_compile_id < 0) return {};
  std::string id = fmt::format("{}/{}", frame_id, frame_compile_id);
  if (attempt > 0) id += fmt::format("_{}", attempt);
  return autograd_id >= 0 ? fmt::format("!{}/{}", autograd_id, id) : id;
}

void addRecord(Fields& f, const store::Step& r) {
  f.add("step", r.index).add("marked by", r.source).add("process", r.pid).add("thread", r.tid);
}
void addRecord(Fields& f, const store::Sync& r) {
  f.source(r.file, r.line).add("function", r.function);
  f.add("waited for", r.sync_kind).add("through", r.op).add("seen by", r.origin).known("stream", r.stream);
  f.known("CUDA correlation id", r.correlation_id).add("process", r.pid).add("thread", r.tid).stack(r.stack);
}
void addRecord(Fields& f, const store::Collective& r) {
  const bool bucket = r.source == "ddp";
  f.add("collective", r.op).add("backend", r.backend);
  if (r.bytes > 0)
    f.add(bucket ? "bucket size" : "tensors passed", fmt::format("{} ({} bytes)", formatBytes(r.bytes), r.bytes));
  f.add("issued by", bucket ? std::string("DDP (a gradient bucket's communication hook)") : r.source);
  if (bucket) {
    f.known("DDP bucket", r.bucket).yesNo("the step's last bucket", r.last_bucket ? 1 : 0);
  } else {
    f.yesNo("asynchronous (async_op=True)", r.async ? 1 : 0);
  }
  f.add("process", r.pid).add("thread", r.tid);
}
void addRecord(Fields& f, const store::Compile& r) {
  f.source(r.co_filename, r.co_firstlineno).add("function", r.co_name);
  f.add("compile id", compileId(r.compiled_autograd_id, r.frame_id, r.frame_compile_id, r.attempt));
  f.add("status", r.status).add("failure", r.fail_type).add("failure reason", r.fail_reason);
  f.add("restarted because", r.restart_reasons);
  f.duration("Dynamo (whole compile)", r.dynamo_ns)
      .duration("AOT autograd", r.aot_ns)
      .duration("Inductor", r.inductor_ns);
  f.known("graphs", r.graph_count).known("graph ops", r.graph_op_count).known("graph nodes", r.graph_node_count);
  f.known("guards", r.guard_count).known("cache entries of the frame", r.cache_size);
  f.yesNo("FX graph cache hit", r.cache_hit).add("process", r.pid);
}
void addRecord(Fields& f, const store::GraphBreak& r) {
  f.source(r.file, r.line).add("function", r.function);
  f.add("compile id", compileId(-1, r.frame_id, r.frame_compile_id, r.attempt));
  f.add("break", r.break_type).add("reason", r.reason).add("explanation", r.explanation).add("hints", r.hints);
  f.add("user stack", r.user_stack).yesNo("frame ran eagerly", r.frame_skipped ? 1 : 0).add("process", r.pid);
}
void addRecord(Fields& f, const store::Recompile& r) {
  f.source(r.co_filename, r.co_firstlineno).add("function", r.co_name);
  f.add("compile id", compileId(-1, r.frame_id, r.frame_compile_id, 0));
  f.add("cause", r.cause).add("failed guards", r.guard_failures).known("cache entries of the frame", r.cache_size);
  f.yesNo("recompile limit hit", r.limit_hit ? 1 : 0).add("process", r.pid);
}

template <class Record>
void addRow(Fields& fields, std::string_view table, const std::vector<Record>& rows, std::int64_t index) {
  if (index >= 0 && static_cast<std::size_t>(index) < rows.size()) addRecord(fields, rows[static_cast<std::size_t>(index)]);
  fields.add("store row", fmt::format("{} #{}", table, index));
}

bool endsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

std::string runOffset(Nanos time_ns, Nanos run_begin_ns) {
  const Nanos offset = base::saturatingSub(time_ns, run_begin_ns);
  return fmt::format("{}{:.6f} s into the run", offset < 0 ? "-" : "+",
                     static_cast<double>(offset < 0 ? base::saturatingSub(0, offset) : offset) * 1e-9);
}

std::optional<Field> readableColumn(std::string_view column, std::string_view value) {
  // The slice's own start, end and duration are already listed, and so is its store row.
  if (column == "id" || column == "start_ns" || column == "end_ns") return {};
  if (saysNothing(value) || value == "-1") return {};
  if (column == "pid") return Field{"process", std::string(value)};
  if (column == "tid") return Field{"thread", std::string(value)};
  std::string name(column);
  std::replace(name.begin(), name.end(), '_', ' ');
  char* end = nullptr;
  const std::string text(value);
  const long long number = std::strtoll(text.c_str(), &end, 10);
  const bool integer = end != text.c_str() && *end == '\0';
  if (integer && endsWith(column, "_ns")) return Field{name.substr(0, name.size() - 3), formatDuration(number)};
  if (integer && (column == "bytes" || endsWith(column, "_bytes"))) {
    return Field{name, fmt::format("{} ({} bytes)", formatBytes(number), number)};
  }
  return Field{name, text};
}

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
    case RecordKind::kCollective: return "collectives";
  }
  return "";
}

std::vector<Field> describe(const Timeline& timeline, const SliceRef& ref) {
  const Slice& slice = ref.slice;
  const Records& r = timeline.records;
  Fields fields;
  fields.add("name", timeline.name(slice));
  fields.add("start", runOffset(slice.start_ns, timeline.begin_ns));
  fields.add("end", runOffset(slice.end_ns, timeline.begin_ns));
  fields.add("duration", formatDuration(slice.duration()));
  switch (slice.kind) {
    case RecordKind::kStep: addRow(fields, "steps", r.steps, slice.row); break;
    case RecordKind::kSync: addRow(fields, "syncs", r.syncs, slice.row); break;
    case RecordKind::kCompile: addRow(fields, "compiles", r.compiles, slice.row); break;
    case RecordKind::kGraphBreak: addRow(fields, "graph_breaks", r.graph_breaks, slice.row); break;
    case RecordKind::kRecompile: addRow(fields, "recompiles", r.recompiles, slice.row); break;
    case RecordKind::kCollective: addRow(fields, "collectives", r.collectives, slice.row); break;
    default: fields.add("store row", fmt::format("{} #{}", tableOf(slice.kind), slice.row)); break;
  }
  return fields.take();
}

std::vector<Field> describe(const analyzer::Finding& finding) {
  // The fields as the store holds them (analyzer::findingRecord): the panel names the store's columns.
  const store::Finding row = analyzer::findingRecord(finding);
  Fields fields;
  fields.add("rule", row.rule).add("severity", row.severity).add("title", row.title);
  fields.source(row.file, row.line).add("function", row.function).add("message", row.message);
  if (row.count > 0) fields.add("times seen", row.count);
  fields.add("impact",
             fmt::format("{} ({:.1f} % of the run)", formatDuration(base::saturatingCast(row.impact_seconds * 1e9)),
                         row.impact_fraction * 100));
  fields.add("fix", row.fix_summary).add("fix id", row.fix_id).add("fix kind", row.fix_kind);
  fields.add("evidence", row.evidence).add("store row", "findings");
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
