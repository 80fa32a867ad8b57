// The rank facts' fields, each struct listed once (fields()) for both directions. Doubles that are not finite travel
// as the strings "inf", "-inf" and "nan" (JSON has no such number); a flame graph travels as a flat list of its nodes
// in preorder, each with its number of children, so that a deep stack does not nest the document deeply.
#include "FactsJson.h"

#include <cmath>
#include <concepts>
#include <limits>
#include <optional>
#include <utility>

namespace torchscope::analyzer {

namespace facts_json {

using nlohmann::json;

struct JsonWriter;
struct JsonReader;

template <class T>
json encode(const T& value);
template <class T>
void decode(const json& in, T& value);

struct JsonWriter {
  json& out;
  template <class T>
  void operator()(const char* key, const T& value) {
    out[key] = encode(value);
  }
};

struct JsonReader {
  const json& in;
  template <class T>
  void operator()(const char* key, T& value) {
    if (const auto found = in.find(key); found != in.end()) decode(*found, value);
  }
};

template <class V>
void fields(V& v, store::RunInfo& x) {
  v("command_line", x.command_line), v("host", x.host), v("torchscope_version", x.torchscope_version);
  v("python_version", x.python_version), v("torch_version", x.torch_version), v("cuda_version", x.cuda_version);
  v("driver_version", x.driver_version), v("gpu_name", x.gpu_name), v("start_ns", x.start_ns);
  v("start_wall_ns", x.start_wall_ns), v("end_ns", x.end_ns), v("exit_code", x.exit_code), v("source", x.source);
}

template <class V>
void fields(V& v, CaptureWindow& x) {
  v("mode", x.mode), v("first_step", x.first_step), v("end_step", x.end_step), v("delay_s", x.delay_s);
  v("duration_s", x.duration_s), v("signal", x.signal), v("intervals", x.intervals);
  v("open_seconds", x.open_seconds), v("steps", x.steps);
  v("first_kept_step", x.first_kept_step), v("last_kept_step", x.last_kept_step);
}

template <class V>
void fields(V& v, TimelineBucket& x) {
  v("start_s", x.start_s), v("gpu_busy_s", x.gpu_busy_s), v("cpu_op_s", x.cpu_op_s), v("sync_s", x.sync_s);
}

template <class V>
void fields(V& v, OverviewSpan& x) {
  v("start_s", x.start_s), v("end_s", x.end_s), v("label", x.label);
}

template <class V>
void fields(V& v, OverviewMark& x) {
  v("at_s", x.at_s), v("label", x.label);
}

template <class V>
void fields(V& v, FindingPlace& x) {
  v("rule", x.rule), v("file", x.file), v("line", x.line), v("function", x.function), v("start_s", x.start_s);
  v("end_s", x.end_s);
}

template <class V>
void fields(V& v, Overview& x) {
  v("steps", x.steps), v("compiles", x.compiles), v("graph_breaks", x.graph_breaks), v("recompiles", x.recompiles);
  v("host_rss", x.host_rss), v("findings", x.findings);
}

template <class V>
void fields(V& v, DeviceMemorySummary& x) {
  v("device", x.device), v("peak_allocated_bytes", x.peak_allocated_bytes);
  v("peak_reserved_bytes", x.peak_reserved_bytes), v("last_step_allocated_bytes", x.last_step_allocated_bytes);
  v("last_step_reserved_bytes", x.last_step_reserved_bytes);
  v("allocated_growth_bytes_per_step", x.allocated_growth_bytes_per_step);
}

template <class V>
void fields(V& v, MemorySummary& x) {
  v("recorded", x.recorded), v("peak_rss_bytes", x.peak_rss_bytes), v("last_step_rss_bytes", x.last_step_rss_bytes);
  v("rss_growth_bytes_per_step", x.rss_growth_bytes_per_step), v("peak_rss_step", x.peak_rss_step);
  v("devices", x.devices);
}

template <class V>
void fields(V& v, LineTime& x) {
  v("file", x.file), v("line", x.line), v("function", x.function), v("self_samples", x.self_samples);
  v("total_samples", x.total_samples), v("self_s", x.self_s), v("total_s", x.total_s), v("self_cpu_s", x.self_cpu_s);
  v("self_per_step_s", x.self_per_step_s), v("total_per_step_s", x.total_per_step_s), v("share", x.share);
  v("total_share", x.total_share);
}

template <class V>
void fields(V& v, LineTable& x) {
  v("recorded", x.recorded), v("samples", x.samples), v("steps", x.steps);
  v("unsampled_steady_steps", x.unsampled_steady_steps), v("threads", x.threads), v("sampled_s", x.sampled_s);
  v("idle_samples", x.idle_samples), v("idle_s", x.idle_s), v("user_s", x.user_s), v("base_s", x.base_s);
  v("step_s", x.step_s), v("lines", x.lines);
}

template <class V>
void fields(V& v, FlameNode& x) {  // without its children (flameJson)
  v("function", x.function), v("file", x.file), v("line", x.line), v("user", x.user), v("samples", x.samples);
  v("self_samples", x.self_samples), v("total_s", x.total_s), v("self_s", x.self_s);
}

template <class V>
void fields(V& v, TransformerFastPath& x) {
  v("layer_calls", x.layer_calls), v("fast_path_calls", x.fast_path_calls), v("reason", x.reason);
  v("layer_share", x.layer_share);
}

template <class V>
void fields(V& v, RequestSummary& x) {
  v("recorded", x.recorded), v("requests", x.requests), v("steady", x.steady), v("p50_s", x.p50_s);
  v("p90_s", x.p90_s), v("p99_s", x.p99_s), v("max_s", x.max_s), v("busy_s", x.busy_s), v("span_s", x.span_s);
  v("requests_per_s", x.requests_per_s), v("items", x.items), v("items_per_s", x.items_per_s);
  v("transformer", x.transformer);
}

template <class V>
void fields(V& v, ProblemCount& x) {
  v("kind", x.kind), v("file", x.file), v("line", x.line), v("function", x.function), v("detail", x.detail);
  v("count", x.count);
}

template <class V>
void fields(V& v, RunSummary& x) {
  v("path", x.path), v("run", x.run), v("partial", x.partial), v("duration_s", x.duration_s), v("begin_ns", x.begin_ns);
  v("end_ns", x.end_ns), v("process_name", x.process_name), v("rank", x.rank), v("step_seconds", x.step_seconds);
  v("steady_step_seconds", x.steady_step_seconds), v("steady_step_median_s", x.steady_step_median_s);
  v("compile_seconds", x.compile_seconds), v("compiles", x.compiles), v("graph_breaks", x.graph_breaks);
  v("recompiles", x.recompiles), v("syncs", x.syncs), v("kernels", x.kernels), v("job_folder", x.job_folder);
  v("window", x.window), v("timeline", x.timeline), v("overview", x.overview), v("memory", x.memory);
  v("lines", x.lines), v("flame", x.flame), v("requests", x.requests), v("problems", x.problems);
}

template <class V>
void fields(V& v, Finding& x) {
  v("rule", x.rule), v("severity", x.severity), v("recompile_cause", x.recompile_cause), v("title", x.title);
  v("message", x.message), v("file", x.file), v("line", x.line), v("function", x.function), v("count", x.count);
  v("impact_seconds", x.impact_seconds), v("impact_fraction", x.impact_fraction), v("evidence", x.evidence);
  v("fix_id", x.fix_id), v("fix_summary", x.fix_summary), v("fix_kind", x.fix_kind);
}

template <class V>
void fields(V& v, Occurrence& x) {
  v("rule", x.rule), v("file", x.file), v("line", x.line), v("function", x.function), v("registry_id", x.registry_id);
  v("detail", x.detail), v("count", x.count), v("compile_s", x.compile_s);
}

template <class V>
void fields(V& v, RankSummary& x) {
  v("rank", x.rank), v("path", x.path), v("host", x.host), v("pid", x.pid), v("partial", x.partial);
  v("step_seconds", x.step_seconds), v("exposed_seconds", x.exposed_seconds), v("step_median_s", x.step_median_s);
  v("compute_median_s", x.compute_median_s), v("exposed_median_s", x.exposed_median_s);
  v("collective_s", x.collective_s), v("exposed_collective_s", x.exposed_collective_s);
  v("overlap_fraction", x.overlap_fraction), v("collectives", x.collectives), v("compile_s", x.compile_s);
  v("graph_breaks", x.graph_breaks), v("recompiles", x.recompiles);
}

template <class V>
void fields(V& v, RankFacts& x) {  // the steps and collectives stay behind: the summary holds what they gave
  v("summary", x.summary), v("world_size", x.world_size), v("launcher", x.launcher), v("job_id", x.job_id);
  v("occurrences", x.occurrences);
}

template <class T>
concept Listed = requires(JsonWriter& writer, T& value) {
  fields(writer, value);
};

template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};

template <class T>
struct IsPair : std::false_type {};
template <class A, class B>
struct IsPair<std::pair<A, B>> : std::true_type {};

json encodeDouble(double value) {
  if (std::isfinite(value)) return value;
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

double decodeDouble(const json& in) {
  if (!in.is_string()) return in.get<double>();
  const auto text = in.get<std::string>();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw json::type_error::create(302, "a number was expected, not \"" + text + "\"", &in);
}

// The tree in preorder, each node followed by its subtree.
void flattenFlame(const FlameNode& node, json& nodes) {
  json entry = json::object();
  JsonWriter writer{entry};
  fields(writer, const_cast<FlameNode&>(node));
  entry["children"] = node.children.size();
  nodes.push_back(std::move(entry));
  for (const auto& child : node.children) flattenFlame(child, nodes);
}

FlameNode unflattenFlame(const json& nodes, std::size_t& next) {
  const json& entry = nodes.at(next++);
  FlameNode node;
  JsonReader reader{entry};
  fields(reader, node);
  const auto children = entry.at("children").get<std::size_t>();
  if (children > nodes.size() - next)
    throw json::out_of_range::create(401, "a flame node has too many children", &entry);
  for (std::size_t i = 0; i < children; ++i) node.children.push_back(unflattenFlame(nodes, next));
  return node;
}

template <class T>
json encode(const T& value) {
  if constexpr (std::same_as<T, double>) {
    return encodeDouble(value);
  } else if constexpr (std::same_as<T, RuleId>) {
    return std::string(value.text());
  } else if constexpr (std::same_as<T, Severity>) {
    return std::string(severityName(value));
  } else if constexpr (std::same_as<T, std::optional<store::RecompileCauseKind>>) {
    return value ? json(std::string(store::recompileCauseName(*value))) : json(nullptr);
  } else if constexpr (std::same_as<T, FlameGraph>) {
    json out = json::object();
    out["recorded"] = value.recorded, out["steps"] = value.steps, out["threads"] = value.threads;
    out["min_share"] = encodeDouble(value.min_share), out["pruned_nodes"] = value.pruned_nodes;
    out["pruned_s"] = encodeDouble(value.pruned_s), out["unsampled_steady_steps"] = value.unsampled_steady_steps;
    flattenFlame(value.root, out["nodes"] = json::array());
    return out;
  } else if constexpr (IsPair<T>::value) {
    return json::array({encode(value.first), encode(value.second)});
  } else if constexpr (IsVector<T>::value) {
    json out = json::array();
    for (const auto& item : value) out.push_back(encode(item));
    return out;
  } else if constexpr (Listed<T>) {
    json out = json::object();
    JsonWriter writer{out};
    fields(writer, const_cast<T&>(value));
    return out;
  } else {
    return json(value);  // integers, booleans, text, evidence
  }
}

template <class T>
void decode(const json& in, T& value) {
  if constexpr (std::same_as<T, double>) {
    value = decodeDouble(in);
  } else if constexpr (std::same_as<T, RuleId>) {
    const auto text = in.get<std::string>();
    value = text.empty() ? RuleId() : RuleId::fromText(text);
  } else if constexpr (std::same_as<T, Severity>) {
    value = parseSeverity(in.get<std::string>()).value_or(Severity::kInfo);
  } else if constexpr (std::same_as<T, std::optional<store::RecompileCauseKind>>) {
    value = in.is_null() ? std::nullopt : store::parseRecompileCause(in.get<std::string>());
  } else if constexpr (std::same_as<T, FlameGraph>) {
    JsonReader reader{in};
    reader("recorded", value.recorded), reader("steps", value.steps), reader("threads", value.threads);
    reader("min_share", value.min_share), reader("pruned_nodes", value.pruned_nodes),
        reader("pruned_s", value.pruned_s);
    reader("unsampled_steady_steps", value.unsampled_steady_steps);
    std::size_t next = 0;
    value.root = unflattenFlame(in.at("nodes"), next);
  } else if constexpr (IsPair<T>::value) {
    decode(in.at(0), value.first);
    decode(in.at(1), value.second);
  } else if constexpr (IsVector<T>::value) {
    if (!in.is_array()) throw json::type_error::create(302, "a list was expected", &in);
    value.clear();
    value.reserve(in.size());
    for (const auto& item : in) decode(item, value.emplace_back());
  } else if constexpr (Listed<T>) {
    if (!in.is_object()) throw json::type_error::create(302, "an object was expected", &in);
    JsonReader reader{in};
    fields(reader, value);
  } else if constexpr (std::same_as<T, json>) {
    value = in;
  } else {
    value = in.get<T>();
  }
}

}  // namespace facts_json

using facts_json::decode;
using facts_json::encode;

nlohmann::json shareJson(const StoreShare& share) {
  const Analysis& analysis = share.analysis;
  nlohmann::json document = nlohmann::json::object();
  document["run"] = encode(analysis.runs.at(0));
  document["findings"] = encode(analysis.findings);
  document["notes"] = encode(analysis.notes);
  document["rank"] = encode(share.ranks);
  return document;
}

StoreShare shareFromJson(const nlohmann::json& document) {
  StoreShare share;
  decode(document.at("run"), share.analysis.runs.emplace_back());
  decode(document.at("findings"), share.analysis.findings);
  decode(document.at("notes"), share.analysis.notes);
  decode(document.at("rank"), share.ranks);
  return share;
}

}  // namespace torchscope::analyzer
