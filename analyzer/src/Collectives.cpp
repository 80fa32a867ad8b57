#include "Collectives.h"

#include "Rules.h"

namespace torchscope::analyzer {

CollectiveSpan hostCollective(base::Nanos start_ns, base::Nanos end_ns, std::string_view source, std::int64_t async) {
  const bool ddp = source == "ddp";
  return {start_ns, end_ns, ddp, !ddp && async == 0, false, 0};
}

Result<std::vector<std::int64_t>> NcclOverlap::ncclNameIds(const store::Reader& reader) {
  std::vector<std::int64_t> ids;
  auto done = reader.query("SELECT id FROM strings WHERE value LIKE '%nccl%'",
                           [&](const store::Row& row) { ids.push_back(row.integer(0)); });
  if (!done) return done.error();
  return ids;
}

std::vector<CollectiveSpan> NcclOverlap::finish() {
  const auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  std::stable_sort(nccl_.begin(), nccl_.end(), by_start);
  // Kernels come nearly in start order: sorting is skipped when they already are.
  if (!std::is_sorted(compute_.begin(), compute_.end(), by_start)) std::sort(compute_.begin(), compute_.end(), by_start);
  std::vector<CollectiveSpan> spans;
  spans.reserve(nccl_.size());
  for (const auto& nccl : nccl_) {
    // A kernel that overlaps this one starts at most longest_compute_ before it.
    auto kernel = std::lower_bound(compute_.begin(), compute_.end(), base::saturatingSub(nccl.start, longest_compute_),
                                   [](const Interval& k, base::Nanos start) { return k.start < start; });
    base::Nanos overlapped = 0;
    for (; kernel != compute_.end() && kernel->start < nccl.end; ++kernel) {
      const base::Nanos overlap = base::spanNanos(std::max(kernel->start, nccl.start), std::min(kernel->end, nccl.end));
      overlapped = base::saturatingAdd(overlapped, overlap);
    }
    const double hidden = static_cast<double>(std::min(base::spanNanos(nccl.start, nccl.end), overlapped));
    spans.push_back({nccl.start, nccl.end, false, false, true, toSeconds(hidden)});
  }
  nccl_.clear();
  compute_.clear();
  return spans;
}

}  // namespace torchscope::analyzer
