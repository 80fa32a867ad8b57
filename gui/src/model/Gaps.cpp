// The cause of the GPUs' longest idle gaps (analyzer::explainIdleGaps), and for gaps where the host
// was late, what the launching thread was doing meanwhile: the most specific slice of its CPU ops,
// CUDA API calls and syncs that covers most of the gap.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "Scan.h"
#include "torchscope/base/Saturating.h"
#include "torchscope/gui/Text.h"

namespace torchscope::gui::detail {

namespace {

// Specificity of what a thread was doing: a sync or API call says more than the op around it.
int specificity(TrackKind kind) {
  switch (kind) {
    case TrackKind::kSyncs: return 3;
    case TrackKind::kApiCalls: return 2;
    case TrackKind::kCollectives: return 2;
    case TrackKind::kCpuOps: return 1;
    default: return 0;
  }
}

std::string hostActivity(const Timeline& timeline, const GpuGap& gap) {
  const Nanos length = base::spanNanos(gap.gap.start_ns, gap.gap.end_ns);
  const Slice* best = nullptr;
  std::pair<int, std::size_t> best_rank{-1, 0};
  for (const Track& track : timeline.tracks) {
    if (track.store != gap.store || track.gpu() || track.pid != gap.gap.pid || track.tid != gap.gap.launch_tid ||
        specificity(track.kind) == 0) {
      continue;
    }
    for (std::size_t depth = 0; depth < track.lanes.size(); ++depth) {
      const Lane& lane = track.lanes[depth];
      for (std::size_t i = lane.firstEndingFrom(gap.gap.start_ns);
           i < lane.slices().size() && lane.slices()[i].start_ns < gap.gap.end_ns; ++i) {
        const Slice& slice = lane.slices()[i];
        const Nanos overlap =
            base::spanNanos(std::max(slice.start_ns, gap.gap.start_ns), std::min(slice.end_ns, gap.gap.end_ns));
        if (overlap < length - overlap) continue;  // under half the gap (overlap <= length)
        const std::pair<int, std::size_t> rank{specificity(track.kind), depth};
        if (best == nullptr || rank > best_rank) {
          best = &slice;
          best_rank = rank;
        }
      }
    }
  }
  if (best == nullptr) return {};
  return fmt::format("{} ({})", timeline.name(*best), formatDuration(best->duration()));
}

}  // namespace

Result<void> explainGaps(Timeline& timeline, std::size_t limit) {
  auto& gaps = timeline.gaps;
  std::vector<std::size_t> longest(gaps.size());
  std::iota(longest.begin(), longest.end(), 0);
  const auto length = [&](std::size_t i) { return base::spanNanos(gaps[i].gap.start_ns, gaps[i].gap.end_ns); };
  if (longest.size() > limit) {
    std::nth_element(longest.begin(), longest.begin() + static_cast<std::ptrdiff_t>(limit), longest.end(),
                     [&](std::size_t a, std::size_t b) { return length(a) > length(b); });
    longest.resize(limit);
  }
  for (std::uint32_t store = 0; store < timeline.stores.size(); ++store) {
    std::vector<std::size_t> mine;
    std::vector<analyzer::IdleGap> asked;
    for (const std::size_t i : longest) {
      if (gaps[i].store != store) continue;
      mine.push_back(i);
      asked.push_back(gaps[i].gap);
    }
    if (asked.empty()) continue;
    auto reader = store::Reader::open(timeline.stores[store].path);
    if (!reader) return reader.error();
    auto explained = analyzer::explainIdleGaps(**reader, asked, timeline.stores[store].shift_ns);
    if (!explained) return explained;
    for (std::size_t k = 0; k < mine.size(); ++k) gaps[mine[k]].gap = asked[k];
  }
  for (GpuGap& gap : gaps) {
    if (gap.gap.cause == analyzer::IdleCause::kHostLate) gap.host_activity = hostActivity(timeline, gap);
  }
  return {};
}

}  // namespace torchscope::gui::detail
