#include "OpCensus.h"

namespace torchscope::analyzer {

namespace {

std::vector<OpCensus::FrequentOp> frequentOps(const std::vector<store::CensusOp>& ops) {
  std::vector<OpCensus::FrequentOp> frequent;
  for (const auto& op : ops) frequent.push_back({op.name, op.count, op.ns});
  return frequent;
}

std::optional<OpCensus::Site::Context> siteContext(const std::string& name) {
  if (name == "model") return OpCensus::Site::Context::kModel;
  if (name == "backward") return OpCensus::Site::Context::kBackward;
  if (name == "outside") return OpCensus::Site::Context::kOutside;
  return std::nullopt;
}

// The sites of a known context; a later bridge's other contexts are left out.
std::vector<OpCensus::Site> censusSites(const store::OpCensus& row) {
  std::vector<OpCensus::Site> sites;
  for (const auto& site : row.censusSites()) {
    const auto context = siteContext(site.context);
    if (!context) continue;
    sites.push_back({*context, site.file, site.line, site.function, site.via, site.ops, site.short_ops, site.op_ns,
                     site.short_op_ns, site.gap_ns, frequentOps(store::frequentOpsOf(site))});
  }
  return sites;
}

OpCensus censusOf(const store::OpCensus& row) {
  OpCensus census;
  census.start_ns = row.start_ns;
  census.end_ns = row.end_ns;
  census.step = row.step;
  census.ops = row.ops;
  census.short_ops = row.short_ops;
  census.op_ns = row.op_ns;
  census.short_op_ns = row.short_op_ns;
  census.step_ns = row.step_ns;
  census.short_op_threshold_ns = row.short_op_threshold_ns;
  census.op_overhead_ns = row.op_overhead_ns;
  census.model = row.model;
  census.model_file = row.model_file;
  census.model_line = row.model_line;
  census.model_function = row.model_function;
  census.step_file = row.step_file;
  census.step_line = row.step_line;
  census.step_function = row.step_function;
  census.frequent_ops = frequentOps(row.frequentOps());
  census.sites = censusSites(row);
  return census;
}

}  // namespace

Result<std::optional<OpCensus>> loadOpCensus(const store::Reader& reader) {
  store::LoadOptions first;
  first.limit = 1;
  auto rows = reader.load<store::OpCensus>(first);
  if (!rows) return rows.error();
  if (rows->empty()) return std::optional<OpCensus>();
  return std::optional<OpCensus>(censusOf(rows->front()));
}

}  // namespace torchscope::analyzer
