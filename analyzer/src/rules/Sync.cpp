// sync/*: host-device synchronisations repeated at one user line, with the time the host was blocked. The
// line is the innermost user frame of the sync's stack, chosen with the analysis' idea of user code.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <tuple>

#include "../Locations.h"
#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

struct Cause {
  RuleId rule;  // sync/*
  FixProposal fix;
};

Cause classifySync(const std::string& op, const std::string& sync_kind) {
  const std::string text = lowercase(op);
  if (containsAny(text, {"repeat_interleave"})) {
    return {"sync/repeat-interleave",
            {fix::kRepeatInterleaveOutputSize,
             "pass output_size= to torch.repeat_interleave so it need not read the "
             "repeats back from the GPU"}};
  }
  if (containsAny(text, {"nonzero", "masked_select", "aten::index", "masked_scatter", "unique"})) {
    return {"sync/nonzero",
            {"",
             "use a static-shape alternative (torch.where, multiplying by the mask) instead of "
             "nonzero or boolean-mask indexing"}};
  }
  if (containsAny(text, {"item", "_local_scalar_dense", "is_nonzero", "__bool__"})) {
    return {"sync/item",
            {fix::kItemAccumulateTensor,
             "keep the value on the GPU (accumulate into a tensor) and read it "
             "once at the end instead of calling .item() every step"}};
  }
  if (containsAny(text, {"aten::to", "_to_copy", "copy_", "cpu", "tolist", "numpy", "memcpy"}) || sync_kind == "memcpy") {
    return {"sync/host-copy",
            {fix::kItemAccumulateTensor,
             "keep tensors on the GPU and copy to the host once at the end "
             "(or non_blocking=True into pinned memory)"}};
  }
  if (containsAny(text, {"devicesynchronize", "cuda.synchronize", "stream.synchronize"}) || text == "synchronize") {
    return {"sync/synchronize", {"", "remove the explicit synchronize from the step; time with CUDA events if needed"}};
  }
  return {"sync/other",
          {"",
           "find what reads GPU data on the host at this line (torch.cuda.set_sync_debug_mode('warn') "
           "names it) and keep it on the GPU"}};
}

struct SyncSite {
  RuleId rule;
  std::string file;
  std::int64_t line = -1;
  std::string function;
  bool operator<(const SyncSite& other) const {
    return std::tie(rule, file, line, function) < std::tie(other.rule, other.file, other.line, other.function);
  }
};

struct Group {
  std::int64_t count = 0;
  double blocked_s = 0;
  FixProposal fix;
  std::map<std::string, std::int64_t> ops;
};

// The syncs of one place and stack.
struct StackKey {
  std::int64_t op_id = 0;
  std::int64_t file_id = 0;
  std::int64_t line = -1;
  std::string function;
  std::string stack;
  bool operator<(const StackKey& other) const {
    return std::tie(op_id, file_id, line, function, stack) <
           std::tie(other.op_id, other.file_id, other.line, other.function, other.stack);
  }
};

struct StackRows {
  std::int64_t count = 0;
  std::int64_t nanos = 0;  // blocked
  std::string kind;        // the least sync_kind (by bytes)
};

struct SyncStacks {
  std::map<StackKey, StackRows> rows;  // in the order of SQL's GROUP BY over the same columns
  std::map<std::int64_t, std::string> names;  // the op and file ids' strings
};

// The syncs grouped by place and stack in one pass: cheaper than SQL's GROUP BY, which sorts every row.
Result<SyncStacks> groupByStack(const store::Reader& reader) {
  SyncStacks stacks;
  auto done = reader.query(
      "SELECT op_id, file_id, line, function, stack, start_ns, end_ns, sync_kind FROM syncs", [&](const store::Row& row) {
        StackRows& rows = stacks.rows[{row.integer(0), row.integer(1), row.integer(2), row.text(3), row.text(4)}];
        std::string kind = row.text(7);
        if (rows.count == 0 || kind < rows.kind) rows.kind = std::move(kind);
        ++rows.count;
        rows.nanos = base::saturatingAdd(rows.nanos, base::spanNanos(row.integer(5), row.integer(6)));
      });
  if (!done) return done.error();
  std::set<std::int64_t> ids;
  for (const auto& [key, rows] : stacks.rows) ids.insert({key.op_id, key.file_id});
  if (ids.empty()) return stacks;
  done = reader.query(fmt::format("SELECT id, value FROM strings WHERE id IN ({})", fmt::join(ids, ",")),
                      [&](const store::Row& row) { stacks.names[row.integer(0)] = row.text(1); });
  if (!done) return done.error();
  return stacks;
}

// A sync that happens once (the end of a script, a final metric) is not a per-step problem.
constexpr std::int64_t kMinimumCount = 2;
// Below this share of the run the host hardly waited.
constexpr double kMinimumSyncFraction = 0.001;

}  // namespace

Result<void> syncRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.count("syncs") == 0) return {};
  std::map<SyncSite, Group> groups;
  // One entry per place and stack (a sync site repeats its stack), so that the user's frame is chosen once per stack.
  auto stacks = groupByStack(context.reader);
  if (!stacks) return stacks.error();
  for (const auto& [key, rows] : stacks->rows) {
    const auto op_name = stacks->names.find(key.op_id);
    const auto file_name = stacks->names.find(key.file_id);
    if (op_name == stacks->names.end() || file_name == stacks->names.end()) continue;  // a dangling string id
    const std::string& op = op_name->second;
    const Cause cause = classifySync(op, rows.kind);
    Location where = innermostUserLocation(store::parseStack(key.stack), context.code);
    if (!where.known()) where = {file_name->second, key.line, key.function};
    Group& group = groups[{cause.rule, where.file, where.line, where.function}];
    group.count += rows.count;
    group.blocked_s += toSeconds(static_cast<double>(rows.nanos));
    group.fix = cause.fix;
    group.ops[op] += rows.count;
  }

  const double steps = static_cast<double>(std::max<std::int64_t>(1, facts.stepCount()));
  for (const auto& [site, group] : groups) {
    const double fraction = facts.windowFraction(group.blocked_s);
    if (group.count < kMinimumCount || fraction < kMinimumSyncFraction) continue;
    const double per_step_s = group.blocked_s / steps;
    const std::string where = formatLocation(site.file, site.line);
    Finding finding = makeFinding(
        site.rule, fraction >= 0.05 ? Severity::kWarning : Severity::kInfo,
        fmt::format("Host waits for the GPU at {} ({})", where.empty() ? "an unknown line" : where,
                    group.ops.begin()->first),
        fmt::format("The host was blocked {} times here, {} in total ({} of the run{}). Every sync empties the GPU's "
                    "queue, so the GPU idles while Python catches up.",
                    group.count, formatSeconds(group.blocked_s), formatPercent(fraction),
                    facts.stepCount() > 0 ? fmt::format(", {} per step", formatSeconds(per_step_s)) : ""),
        group.fix);
    finding.file = site.file;
    finding.line = site.line;
    finding.function = site.function;
    finding.count = group.count;
    setImpact(finding, facts, group.blocked_s);
    setEvidence(finding, {{"ops", group.ops}, {"blocked_seconds", group.blocked_s},
                          {"blocked_seconds_per_step", per_step_s}, {"steps", facts.stepCount()}});
    out.push_back(std::move(finding));
  }
  return {};
}

}  // namespace torchscope::analyzer
