// memcpy/pageable: host-device copies from or to pageable memory (a DataLoader without pin_memory).
#include <fmt/format.h>

#include "../Rules.h"
#include "torchscope/analyzer/FixIds.h"
#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {
constexpr std::int64_t kMinimumCopies = 2;  // one copy of a result at the end is not worth pinning
constexpr double kMinimumCopyFraction = 0.001;
}  // namespace

Result<void> memcpyRules(const Context& context, std::vector<Finding>& out) {
  const Facts& facts = context.facts;
  if (facts.count("memcpy") == 0) return {};
  std::int64_t copies = 0;
  std::int64_t async_copies = 0;
  std::int64_t bytes = 0;
  double seconds = 0;
  nlohmann::json by_kind = nlohmann::json::object();
  // total(), not sum(): sum() fails on an integer overflow. A span that ends before it starts is none.
  auto done = context.reader.query(
      "SELECT copy_kind, count(*), total(bytes), total(max(end_ns - start_ns, 0)), sum(async != 0) FROM memcpy "
      "WHERE pageable = 1 AND copy_kind IN ('HtoD', 'DtoH') GROUP BY copy_kind",
      [&](const store::Row& row) {
        copies += row.integer(1);
        bytes = base::saturatingAdd(bytes, base::saturatingCast(row.real(2)));
        seconds += toSeconds(row.real(3));
        async_copies += row.integer(4);
        by_kind[row.text(0)] = {{"copies", row.integer(1)},
                                {"bytes", base::saturatingCast(row.real(2))},
                                {"seconds", toSeconds(row.real(3))}};
      });
  if (!done) return done.error();
  if (copies < kMinimumCopies || facts.windowFraction(seconds) < kMinimumCopyFraction) return {};

  Finding finding = makeFinding(
      "memcpy/pageable", facts.windowFraction(seconds) >= 0.05 ? Severity::kWarning : Severity::kInfo,
      fmt::format("{} copies between the GPU and pageable host memory", copies),
      fmt::format("{} host-device copies ({:.1f} MiB, {}) used pageable memory{}. Such copies are staged through a "
                  "driver buffer and block the host; from pinned memory they run faster and overlap with compute.",
                  copies, static_cast<double>(bytes) / (1024.0 * 1024.0), formatSeconds(seconds),
                  async_copies > 0
                      ? fmt::format(", {} of them asked for non_blocking but ran synchronously", async_copies)
                      : ""),
      {fix::kPinMemory, "DataLoader(..., pin_memory=True) and .to(device, non_blocking=True)"});
  finding.count = copies;
  setImpact(finding, facts, seconds);
  setEvidence(finding, {{"copies", copies}, {"async_copies", async_copies}, {"bytes", bytes},
                        {"seconds", seconds}, {"by_kind", by_kind}});
  out.push_back(std::move(finding));
  return {};
}

}  // namespace torchscope::analyzer
