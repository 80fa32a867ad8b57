#include "torchscope/gui/Timeline.h"

#include <algorithm>
#include <tuple>

#include "torchscope/gui/Text.h"

namespace torchscope::gui {

std::size_t Timeline::sliceCount() const {
  std::size_t count = 0;
  for (const auto& track : tracks) {
    for (const auto& lane : track.lanes) count += lane.count();
  }
  return count;
}

std::vector<bool> Timeline::matchingNames(std::string_view needle) const {
  std::vector<bool> mask(names.size(), false);
  if (needle.empty()) return mask;
  for (std::size_t i = 0; i < names.size(); ++i) mask[i] = containsIgnoringCase(names[i], needle);
  return mask;
}

std::vector<std::uint32_t> Timeline::gpuTracks(std::uint32_t store, std::int64_t device) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < tracks.size(); ++i) {
    if (tracks[i].gpu() && tracks[i].store == store && tracks[i].device == device) out.push_back(i);
  }
  return out;
}

std::pair<std::size_t, std::size_t> Timeline::gapsIn(std::uint32_t store, std::int64_t device, Nanos from_ns,
                                                    Nanos to_ns) const {
  // Gaps of one GPU do not overlap, so their ends grow with their starts.
  const auto key = [](const GpuGap& gap) { return std::make_tuple(gap.store, gap.gap.device, gap.gap.end_ns); };
  const auto first = std::partition_point(gaps.begin(), gaps.end(), [&](const GpuGap& gap) {
    return key(gap) <= std::make_tuple(store, device, from_ns);
  });
  auto last = first;
  while (last != gaps.end() && last->store == store && last->gap.device == device && last->gap.start_ns < to_ns) ++last;
  return {static_cast<std::size_t>(first - gaps.begin()), static_cast<std::size_t>(last - gaps.begin())};
}

std::optional<SliceRef> Timeline::findInMemory(std::uint32_t track, RecordKind kind, std::int64_t row,
                                               Nanos start_ns) const {
  if (track >= tracks.size()) return std::nullopt;
  const auto& lanes = tracks[track].lanes;
  for (std::uint32_t l = 0; l < lanes.size(); ++l) {
    const auto& slices = lanes[l].slices();
    auto it = std::partition_point(slices.begin(), slices.end(),
                                   [start_ns](const Slice& slice) { return slice.start_ns < start_ns; });
    for (; it != slices.end() && it->start_ns == start_ns; ++it) {
      if (it->kind == kind && it->row == row) return SliceRef{track, l, *it};
    }
  }
  return std::nullopt;
}

}  // namespace torchscope::gui
