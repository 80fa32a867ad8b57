// TORCH_TRACE importer: glog-prefixed JSON lines with tab-prefixed payloads (see docs/interop.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "GraphBreakText.h"
#include "JsonFields.h"
#include "WallClock.h"
#include "torchscope/base/JsonText.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/interop/Trace.h"
#include "torchscope/store/Classify.h"

namespace torchscope::interop {

namespace {

using json_fields::find;
using json_fields::getDouble;
using json_fields::getInt;
using json_fields::getString;
using json_fields::Json;

constexpr std::int64_t kNanosPerSecond = 1'000'000'000;
constexpr std::int64_t kQuarterHour = 15LL * 60 * kNanosPerSecond;

// `V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] {...}`: local time without a year.
struct GlogPrefix {
  unsigned month = 1;
  unsigned day = 1;
  std::int64_t nanos_of_day = 0;
  std::int64_t thread = -1;
};

bool readDigits(std::string_view text, std::size_t at, std::size_t count, std::int64_t& value) {
  if (at + count > text.size()) return false;
  value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  return true;
}

bool parseGlogPrefix(std::string_view line, GlogPrefix& prefix, std::string_view& rest) {
  if (line.size() < 22 || std::string_view("VIWEFCD").find(line[0]) == std::string_view::npos) return false;
  std::int64_t month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!readDigits(line, 1, 2, month) || !readDigits(line, 3, 2, day) || line[5] != ' ' ||
      !readDigits(line, 6, 2, hour) || line[8] != ':' || !readDigits(line, 9, 2, minute) || line[11] != ':' ||
      !readDigits(line, 12, 2, second) || line[14] != '.') {
    return false;
  }
  std::size_t at = 15;
  std::int64_t fraction_ns = 0, scale = 100'000'000;
  for (; at < line.size() && line[at] >= '0' && line[at] <= '9'; ++at, scale /= 10) fraction_ns += (line[at] - '0') * scale;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  while (at < line.size() && line[at] == ' ') ++at;
  std::int64_t thread = 0;
  std::size_t digits = 0;
  for (; at < line.size() && line[at] >= '0' && line[at] <= '9' && digits < 18; ++at, ++digits) {
    thread = thread * 10 + (line[at] - '0');
  }
  const auto close = line.find("] ", at);
  if (digits == 0 || close == std::string_view::npos) return false;
  prefix.month = static_cast<unsigned>(month);
  prefix.day = static_cast<unsigned>(day);
  prefix.nanos_of_day = ((hour * 60 + minute) * 60 + second) * kNanosPerSecond + fraction_ns;
  prefix.thread = thread;
  rest = line.substr(close + 2);
  return true;
}

struct Entry {
  std::size_t line_number = 0;
  GlogPrefix prefix;
  Json envelope;
  std::string payload;
  std::int64_t wall_ns = 0;  // set once the time base is known
};

using CompileKey = std::tuple<std::int64_t, std::int64_t>;  // frame_id, frame_compile_id

// Artifacts seen for a compile id before its compilation_metrics arrive.
struct PendingCompile {
  std::int64_t cache_hit = -1;
  std::vector<std::size_t> recompiles;  // indices into out.recompiles
  std::optional<std::int64_t> dynamo_start_ns;
  std::string frame_file;  // innermost frame of dynamo_start's stack
  std::string frame_function;
  std::int64_t frame_line = -1;
};

class TorchTraceParser {
 public:
  TorchTraceParser(const TorchTraceSource& source, ImportedTrace& out) : source_(source), out_(out) {}

  Result<void> run(std::string_view text) {
    collect(text);
    if (entries_.empty()) {
      return makeError(ErrorCode::kInvalidArgument, fmt::format("{}: no TORCH_TRACE events found", source_.name));
    }
    resolveTimeBase();
    pid_ = entries_.front().prefix.thread;
    for (auto& entry : entries_) handle(entry);
    finish();
    return {};
  }

 private:
  void skip(std::string_view what, std::size_t line_number, std::string_view why) {
    for (auto& skipped : out_.skipped) {
      if (skipped.file == source_.name && skipped.what == what) {
        ++skipped.count;
        return;
      }
    }
    out_.skipped.push_back({source_.name, std::string(what), 1, fmt::format("line {}: {}", line_number, why)});
  }

  void collect(std::string_view text) {
    std::size_t line_number = 0;
    bool in_bad_entry = false;
    while (!text.empty()) {
      const auto end = text.find('\n');
      std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
      ++line_number;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      if (line.front() == '\t') {
        if (in_bad_entry) continue;  // the payload of a line already counted as malformed
        if (entries_.empty()) {
          skip("line", line_number, "payload line before any event");
          continue;
        }
        auto& payload = entries_.back().payload;
        if (!payload.empty()) payload += '\n';
        payload.append(line.substr(1));
        continue;
      }
      GlogPrefix prefix;
      std::string_view body;
      in_bad_entry = true;
      if (!parseGlogPrefix(line, prefix, body)) {
        skip("line", line_number, "no glog prefix");
        continue;
      }
      Json envelope = base::parseJson(body);
      if (envelope.is_discarded() || !envelope.is_object()) {
        skip("line", line_number, "invalid JSON");
        continue;
      }
      in_bad_entry = false;
      entries_.push_back({line_number, prefix, std::move(envelope), {}, 0});
    }
  }

  std::int64_t naiveNanos(std::int64_t year, const GlogPrefix& prefix) const {
    // Clamped: an anchor near INT64_MAX nanoseconds (year 2262) makes the year after it out of range.
    const std::int64_t day_ns =
        base::saturatingMul(daysFromCivil(year, prefix.month, prefix.day), 86'400 * kNanosPerSecond);
    return base::saturatingAdd(day_ns, prefix.nanos_of_day);
  }

  // glog prints local time without a year; an event that also carries a Unix timestamp fixes
  // both the year and the UTC offset (to the quarter hour).
  void resolveTimeBase() {
    std::optional<std::pair<const Entry*, std::int64_t>> anchor;
    for (const auto& entry : entries_) {
      if (find(entry.envelope, "chromium_event") == nullptr) continue;
      const Json event = base::parseJson(entry.payload);
      if (event.is_discarded() || !event.is_object()) {
        skip("payload", entry.line_number, "invalid chromium_event JSON");
        continue;
      }
      const auto ts = json_fields::microsToNanos(find(event, "ts"));
      if (!anchor && ts && *ts > 0) anchor = {&entry, *ts};
    }
    if (!anchor) {
      for (const auto& entry : entries_) {
        const Json* metrics = find(entry.envelope, "compilation_metrics");
        if (metrics == nullptr) continue;
        if (auto start = startOfCompile(*metrics)) {
          // Compiles end after they start: the line is at least as late as the start time.
          anchor = {&entry, *start};
          break;
        }
      }
    }
    year_ = source_.fallback_year;
    offset_ns_ = 0;
    if (anchor) {
      const auto [entry, unix_ns] = *anchor;
      const std::int64_t year = yearOf(unix_ns);
      std::int64_t best = year;
      const auto distance = [this, prefix = entry->prefix, anchor_ns = unix_ns](std::int64_t candidate) {
        const std::int64_t naive = naiveNanos(candidate, prefix);
        return std::max(base::spanNanos(naive, anchor_ns), base::spanNanos(anchor_ns, naive));
      };
      for (std::int64_t candidate : {year - 1, year, year + 1}) {
        if (distance(candidate) < distance(best)) best = candidate;
      }
      year_ = static_cast<int>(best);
      const double quarters =
          static_cast<double>(base::saturatingSub(unix_ns, naiveNanos(best, entry->prefix))) / kQuarterHour;
      offset_ns_ = static_cast<std::int64_t>(std::llround(quarters)) * kQuarterHour;
    } else {
      out_.add(store::Diagnostic{
          "import", "info",
          fmt::format("{}: no absolute timestamps in the log; glog times taken as UTC in {}", source_.name, year_), 1});
    }
    // A log that runs over New Year: the month goes backwards.
    std::int64_t year = year_;
    unsigned last_month = entries_.front().prefix.month;
    for (auto& entry : entries_) {
      if (entry.prefix.month < last_month) ++year;
      last_month = entry.prefix.month;
      entry.wall_ns = base::saturatingAdd(naiveNanos(year, entry.prefix), offset_ns_);
    }
  }

  static std::optional<std::int64_t> startOfCompile(const Json& metrics) {
    if (auto us = json_fields::asInt(find(metrics, "start_time_us")); us && *us > 0)
      return base::saturatingMul(*us, 1000);
    if (auto seconds = getDouble(metrics, "start_time"); seconds && *seconds > 0 && *seconds < 9.2e9) {
      return std::llround(*seconds * 1e9);
    }
    return std::nullopt;
  }

  static CompileKey keyOf(const Json& envelope) {
    return {getInt(envelope, "frame_id"), getInt(envelope, "frame_compile_id")};
  }

  void handle(const Entry& entry) {
    const Json& envelope = entry.envelope;
    if (rank_ < 0) rank_ = getInt(envelope, "rank");
    first_ns_ = std::min(first_ns_, entry.wall_ns);
    last_ns_ = std::max(last_ns_, entry.wall_ns);
    if (const Json* str = find(envelope, "str"); str != nullptr) {
      if (str->is_array() && str->size() == 2 && (*str)[0].is_string()) {
        if (auto index = json_fields::asInt(&(*str)[1]); index && *index >= 0) strings_[*index] = (*str)[0].get<std::string>();
      }
      return;
    }
    if (const Json* start = find(envelope, "dynamo_start"); start != nullptr) {
      auto& pending = pending_[keyOf(envelope)];
      if (!pending.dynamo_start_ns) pending.dynamo_start_ns = entry.wall_ns;
      if (const Json* stack = find(*start, "stack"); stack != nullptr && stack->is_array() && !stack->empty()) {
        const Json& frame = stack->back();
        pending.frame_file = resolveFilename(find(frame, "filename"));
        pending.frame_function = getString(frame, "name");
        pending.frame_line = getInt(frame, "line");
      }
      return;
    }
    if (const Json* metrics = find(envelope, "compilation_metrics"); metrics != nullptr && metrics->is_object()) {
      addCompile(entry, *metrics);
      return;
    }
    if (const Json* artifact = find(envelope, "artifact"); artifact != nullptr) {
      const std::string name = getString(*artifact, "name");
      if (name == "dynamo_graph_break_reason") {
        addGraphBreak(entry);
      } else if (name == "recompile_reasons") {
        addRecompile(entry);
      } else if (name == "fx_graph_cache_hit" || name == "fx_graph_cache_miss") {
        pending_[keyOf(envelope)].cache_hit = name == "fx_graph_cache_hit" ? 1 : 0;
        ++(name == "fx_graph_cache_hit" ? cache_hits_ : cache_misses_);
      }
    }
  }

  // Stack frames name their file by an index into the `str` table, or (older logs) inline.
  std::string resolveFilename(const Json* filename) const {
    if (filename == nullptr) return {};
    if (filename->is_string()) return filename->get<std::string>();
    if (auto index = json_fields::asInt(filename)) {
      if (auto it = strings_.find(*index); it != strings_.end()) return it->second;
    }
    return {};
  }

  void addCompile(const Entry& entry, const Json& metrics) {
    store::Compile compile;
    compile.pid = pid_;
    std::tie(compile.frame_id, compile.frame_compile_id) = keyOf(entry.envelope);
    compile.attempt = getInt(entry.envelope, "attempt", 0);
    compile.compiled_autograd_id = getInt(entry.envelope, "compiled_autograd_id");
    compile.co_name = getString(metrics, "co_name");
    compile.co_filename = getString(metrics, "co_filename");
    compile.co_firstlineno = getInt(metrics, "co_firstlineno");
    auto& pending = pending_[{compile.frame_id, compile.frame_compile_id}];
    if (compile.co_name.empty()) {  // failed compiles may log no code object
      compile.co_name = pending.frame_function;
      compile.co_filename = pending.frame_file;
      compile.co_firstlineno = pending.frame_line;
    }
    compile.start_ns = startOfCompile(metrics).value_or(pending.dynamo_start_ns.value_or(entry.wall_ns));
    const auto seconds = [&](std::string_view key) -> std::optional<std::int64_t> {
      if (auto s = getDouble(metrics, key); s && *s >= 0 && *s < 1e9) return std::llround(*s * 1e9);
      return std::nullopt;
    };
    const auto micros = [&](std::string_view key) -> std::optional<std::int64_t> {
      if (auto us = json_fields::asInt(find(metrics, key)); us && *us >= 0 && *us < 1'000'000'000'000'000) return *us * 1000;
      return std::nullopt;
    };
    // New field names first, then the ones torch logged before 2.5.
    const auto duration = micros("duration_us").has_value() ? micros("duration_us") : seconds("entire_frame_compile_time_s");
    compile.end_ns =
        duration ? base::saturatingAdd(compile.start_ns, *duration) : std::max(compile.start_ns, entry.wall_ns);
    compile.dynamo_ns = micros("dynamo_cumulative_compile_time_us").value_or(seconds("entire_frame_compile_time_s").value_or(-1));
    compile.aot_ns = micros("aot_autograd_cumulative_compile_time_us").value_or(seconds("backend_compile_time_s").value_or(-1));
    compile.inductor_ns = micros("inductor_cumulative_compile_time_us").value_or(seconds("inductor_compile_time_s").value_or(-1));
    compile.graph_op_count = getInt(metrics, "graph_op_count");
    compile.graph_node_count = getInt(metrics, "graph_node_count");
    compile.guard_count = getInt(metrics, "guard_count");
    compile.cache_size = getInt(metrics, "cache_size");
    compile.cache_hit = pending.cache_hit;
    compile.fail_type = getString(metrics, "fail_type");
    compile.fail_reason = getString(metrics, "fail_reason");
    compile.status = compile.fail_type.empty() ? "ok" : "failed";
    Json reasons = Json::array();
    if (const Json* restart = find(metrics, "restart_reasons"); restart != nullptr && restart->is_array()) {
      for (const auto& reason : *restart) {
        if (reason.is_string()) reasons.push_back(reason);
      }
    }
    compile.restart_reasons = base::dumpJson(reasons);
    if (torch_version_.empty()) torch_version_ = getString(metrics, "pytorch_version");
    for (std::size_t index : pending.recompiles) {
      auto& recompile = out_.rows<store::Recompile>()[index];
      recompile.co_name = compile.co_name;
      recompile.co_filename = compile.co_filename;
      recompile.co_firstlineno = compile.co_firstlineno;
      recompile.cache_size = compile.cache_size;
    }
    // Inductor's reason when it skipped the CUDA graphs this compile asked for, as the collector writes it.
    compile.cudagraph_skip_reason = getString(metrics, "cudagraph_skip_reason");
    pending_.erase({compile.frame_id, compile.frame_compile_id});
    out_.add(std::move(compile));
  }

  void addGraphBreak(const Entry& entry) {
    store::GraphBreak graph_break;
    graph_break.pid = pid_;
    std::tie(graph_break.frame_id, graph_break.frame_compile_id) = keyOf(entry.envelope);
    graph_break.attempt = getInt(entry.envelope, "attempt", 0);
    graph_break.ts_ns = entry.wall_ns;
    graph_break.hints = "[]";
    graph_break.user_stack = "[]";
    graph_break.stack = "[]";
    parseGraphBreakText(entry.payload, graph_break);
    ++graph_break_artifacts_;
    out_.add(std::move(graph_break));
  }

  void addRecompile(const Entry& entry) {
    store::Recompile recompile;
    recompile.pid = pid_;
    std::tie(recompile.frame_id, recompile.frame_compile_id) = keyOf(entry.envelope);
    recompile.ts_ns = entry.wall_ns;
    // Declared as JSON (a list of strings), but some torch versions write the plain text.
    Json failures = Json::array();
    const Json payload = base::parseJson(entry.payload);
    if (!payload.is_discarded() && payload.is_array()) {
      for (const auto& item : payload) {
        if (item.is_string()) failures.push_back(item);
      }
    } else {
      std::string_view text = entry.payload;
      while (!text.empty()) {
        const auto end = text.find('\n');
        if (const auto line = text.substr(0, end); !line.empty()) failures.push_back(std::string(line));
        text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
      }
    }
    std::string joined;
    for (const auto& failure : failures) joined += failure.get<std::string>() + "\n";
    recompile.guard_failures = base::dumpJson(failures);
    auto& earlier = recompile_causes_[recompile.frame_id];
    store::RecompileCause cause = store::classifyRecompileCause(
        joined, earlier, store::compileIdText(recompile.frame_id, recompile.frame_compile_id));
    earlier.push_back(cause);
    recompile.cause = std::move(cause.cause);
    recompile.cause_detail = std::move(cause.detail);
    recompile.stack = "[]";
    recompile.limit_hit = store::isRecompileLimitHit(joined);
    pending_[{recompile.frame_id, recompile.frame_compile_id}].recompiles.push_back(
        out_.rows<store::Recompile>().size());
    out_.add(std::move(recompile));
  }

  void finish() {
    // Logs from before the graph-break artifact existed record breaks only as restart reasons.
    if (graph_break_artifacts_ == 0) {
      for (std::size_t i = first_compile_; i < out_.rows<store::Compile>().size(); ++i) {
        const auto& compile = out_.rows<store::Compile>()[i];
        const Json reasons = base::parseJson(compile.restart_reasons);
        if (!reasons.is_array()) continue;
        for (const auto& reason : reasons) {
          store::GraphBreak graph_break;
          graph_break.pid = compile.pid;
          graph_break.frame_id = compile.frame_id;
          graph_break.frame_compile_id = compile.frame_compile_id;
          graph_break.attempt = std::max<std::int64_t>(0, compile.attempt - 1);
          graph_break.ts_ns = compile.start_ns;
          graph_break.reason = reason.get<std::string>();
          graph_break.hints = "[]";
          graph_break.user_stack = "[]";
          graph_break.stack = "[]";
          graph_break.function = compile.co_name;
          out_.add(std::move(graph_break));
        }
      }
    }
    store::Process process;
    process.pid = pid_;
    process.rank = rank_ >= 0 ? rank_ : source_.rank;
    process.name = process.rank >= 0 ? fmt::format("rank {}", process.rank) : source_.name;
    process.start_ns = first_ns_;
    process.end_ns = last_ns_;
    out_.add(process);
    if (out_.run.source.empty()) out_.run.source = "import:torch_trace";
    if (out_.run.torch_version.empty()) out_.run.torch_version = torch_version_;
    if (cache_hits_ + cache_misses_ > 0) {
      out_.add(store::RunAttribute{fmt::format("fx_graph_cache.{}", source_.name),
                                   fmt::format("{} hits, {} misses", cache_hits_, cache_misses_)});
    }
  }

  const TorchTraceSource& source_;
  ImportedTrace& out_;
  std::vector<Entry> entries_;
  std::map<std::int64_t, std::string> strings_;
  std::map<CompileKey, PendingCompile> pending_;
  std::map<std::int64_t, std::vector<store::RecompileCause>> recompile_causes_;  // per frame id, in order
  std::size_t first_compile_ = out_.rows<store::Compile>().size();
  std::int64_t year_ = 1970;
  std::int64_t offset_ns_ = 0;
  std::int64_t pid_ = 0;
  std::int64_t rank_ = -1;
  std::int64_t first_ns_ = INT64_MAX;
  std::int64_t last_ns_ = INT64_MIN;
  std::int64_t graph_break_artifacts_ = 0;
  std::int64_t cache_hits_ = 0;
  std::int64_t cache_misses_ = 0;
  std::string torch_version_;
};

}  // namespace

Result<void> parseTorchTrace(std::string_view text, const TorchTraceSource& source, ImportedTrace& out) {
  try {
    return TorchTraceParser(source, out).run(text);
  } catch (const std::exception& error) {  // a library type error on hostile input: report, never crash
    return makeError(ErrorCode::kInvalidArgument, fmt::format("{}: {}", source.name, error.what()));
  }
}

}  // namespace torchscope::interop
