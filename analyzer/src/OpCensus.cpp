#include "OpCensus.h"

#include <nlohmann/json.hpp>

#include "torchscope/base/JsonText.h"

namespace torchscope::analyzer {

namespace {

std::int64_t censusInteger(const nlohmann::json& args, const char* key, std::int64_t fallback) {
  const auto found = args.find(key);
  return found != args.end() && found->is_number_integer() ? found->get<std::int64_t>() : fallback;
}

std::string censusText(const nlohmann::json& args, const char* key) {
  const auto found = args.find(key);
  return found != args.end() && found->is_string() ? found->get<std::string>() : std::string{};
}

std::vector<OpCensus::FrequentOp> censusFrequentOps(const nlohmann::json& args) {
  std::vector<OpCensus::FrequentOp> frequent;
  if (const auto ops = args.find("frequent_ops"); ops != args.end() && ops->is_array()) {
    for (const auto& op : *ops) {
      if (op.is_object()) {
        frequent.push_back({censusText(op, "name"), censusInteger(op, "count", 0), censusInteger(op, "ns", 0)});
      }
    }
  }
  return frequent;
}

std::optional<OpCensus::Site::Context> siteContext(const std::string& name) {
  if (name == "model") return OpCensus::Site::Context::kModel;
  if (name == "backward") return OpCensus::Site::Context::kBackward;
  if (name == "outside") return OpCensus::Site::Context::kOutside;
  return std::nullopt;
}

// The sites of a known context; a later bridge's other contexts are left out.
std::vector<OpCensus::Site> censusSites(const nlohmann::json& args) {
  std::vector<OpCensus::Site> sites;
  const auto found = args.find("sites");
  if (found == args.end() || !found->is_array()) return sites;
  for (const auto& site : *found) {
    if (!site.is_object()) continue;
    const auto context = siteContext(censusText(site, "context"));
    if (!context) continue;
    sites.push_back({*context, censusText(site, "file"), censusInteger(site, "line", -1), censusText(site, "function"),
                     censusText(site, "via"), censusInteger(site, "ops", 0), censusInteger(site, "short_ops", 0),
                     censusInteger(site, "op_ns", 0), censusInteger(site, "short_op_ns", 0),
                     censusInteger(site, "gap_ns", 0), censusFrequentOps(site)});
  }
  return sites;
}

OpCensus censusFromArgs(const nlohmann::json& args) {
  OpCensus census;
  census.step = censusInteger(args, "step", -1);
  census.ops = censusInteger(args, "ops", 0);
  census.short_ops = censusInteger(args, "short_ops", 0);
  census.op_ns = censusInteger(args, "op_ns", 0);
  census.short_op_ns = censusInteger(args, "short_op_ns", 0);
  census.step_ns = censusInteger(args, "step_ns", 0);
  census.short_op_threshold_ns = censusInteger(args, "short_op_threshold_ns", 0);
  census.op_overhead_ns = censusInteger(args, "op_overhead_ns", -1);
  census.model = censusText(args, "model");
  census.model_file = censusText(args, "model_file");
  census.model_line = censusInteger(args, "model_line", -1);
  census.model_function = censusText(args, "model_function");
  census.step_file = censusText(args, "step_file");
  census.step_line = censusInteger(args, "step_line", -1);
  census.step_function = censusText(args, "step_function");
  census.frequent_ops = censusFrequentOps(args);
  census.sites = censusSites(args);
  return census;
}

}  // namespace

Result<std::optional<OpCensus>> loadOpCensus(const store::Reader& reader) {
  std::optional<OpCensus> census;
  auto queried =
      reader.query("SELECT start_ns, end_ns, args FROM cpu_ops WHERE category = 'op_census' ORDER BY start_ns LIMIT 1",
                   [&](const store::Row& row) {
                     const auto args = base::parseJson(row.isNull(2) ? std::string("{}") : row.text(2));
                     if (!args.is_object()) return;
                     census = censusFromArgs(args);
                     census->start_ns = row.integer(0);
                     census->end_ns = row.integer(1);
                   });
  if (!queried) return queried.error();
  return census;
}

}  // namespace torchscope::analyzer
