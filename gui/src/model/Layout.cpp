#include "torchscope/gui/Layout.h"

#include <algorithm>
#include <cmath>

#include "torchscope/base/Saturating.h"

namespace torchscope::gui {

namespace {

constexpr double kHitSlackPx = 3;
constexpr double kMarkerHitSlackPx = 6;

}  // namespace

TrackLayout::TrackLayout(const Timeline& timeline, const LayoutState& state)
    : row_of_track_(timeline.tracks.size(), -1), group_of_track_(timeline.tracks.size(), -1) {
  int y = 0;
  std::size_t index = 0;
  while (index < timeline.tracks.size()) {
    const std::string& group = timeline.tracks[index].group;
    const bool collapsed = state.collapsed_groups.count(group) > 0;
    const int header = static_cast<int>(rows_.size());
    rows_.push_back({y, kGroupHeight, -1, group, collapsed ? 1U : 0U, collapsed, true, {}});
    y += kGroupHeight;
    for (; index < timeline.tracks.size() && timeline.tracks[index].group == group; ++index) {
      const Track& track = timeline.tracks[index];
      rows_[static_cast<std::size_t>(header)].tracks.push_back(static_cast<std::uint32_t>(index));
      group_of_track_[index] = header;
      if (collapsed) continue;
      const bool nested = track.lanes.size() > 1;
      const bool folded = nested && state.collapsed_tracks.count(static_cast<std::uint32_t>(index)) > 0;
      const auto lanes = static_cast<std::uint32_t>(folded ? 1 : std::max<std::size_t>(1, track.lanes.size()));
      const int height = (track.isCounter() ? kCounterHeight : static_cast<int>(lanes) * kLaneHeight) + kTrackPadding;
      row_of_track_[index] = static_cast<int>(rows_.size());
      rows_.push_back({y, height, static_cast<int>(index), track.title, lanes, folded, nested, {}});
      y += height;
    }
  }
  height_ = y;
}

const LayoutRow* TrackLayout::rowOfTrack(std::uint32_t track) const {
  if (track >= row_of_track_.size() || row_of_track_[track] < 0) return nullptr;
  return &rows_[static_cast<std::size_t>(row_of_track_[track])];
}

const LayoutRow* TrackLayout::groupOfTrack(std::uint32_t track) const {
  if (track >= group_of_track_.size() || group_of_track_[track] < 0) return nullptr;
  return &rows_[static_cast<std::size_t>(group_of_track_[track])];
}

const LayoutRow* TrackLayout::rowAt(int y) const {
  const auto it = std::partition_point(rows_.begin(), rows_.end(),
                                       [y](const LayoutRow& row) { return row.y + row.height <= y; });
  return it != rows_.end() && it->y <= y ? &*it : nullptr;
}

std::optional<int> TrackLayout::laneY(std::uint32_t track, std::uint32_t lane) const {
  if (const LayoutRow* row = rowOfTrack(track)) {
    if (lane >= row->lanes) return std::nullopt;
    return laneTop(*row, lane);
  }
  const LayoutRow* group = groupOfTrack(track);
  if (group == nullptr || lane > 0) return std::nullopt;
  return group->y + (kGroupHeight - kLaneHeight) / 2;
}

std::optional<SliceRef> hitTest(const Timeline& timeline, const TrackLayout& layout, const Viewport& viewport,
                                const DetailWindow* window, double x, int y) {
  const LayoutRow* row = layout.rowAt(y);
  if (row == nullptr || row->track < 0) return std::nullopt;
  const auto track_index = static_cast<std::uint32_t>(row->track);
  const Track& track = timeline.tracks[track_index];
  const int offset = y - TrackLayout::laneTop(*row, 0);
  if (offset < 0) return std::nullopt;
  const auto lane = static_cast<std::uint32_t>(offset / TrackLayout::kLaneHeight);
  if (lane >= row->lanes) return std::nullopt;
  const FrameScale frame = viewport.frame();
  const auto& lanes = lanesForFrame(timeline, track_index, frame, window);
  if (lane >= lanes.size()) return std::nullopt;
  const double slack_px = track.markers() ? kMarkerHitSlackPx : kHitSlackPx;
  const Nanos slack_ns = base::saturatingCast(std::ceil(slack_px * viewport.nsPerPixel()));
  const auto slice = lanes[lane].hit(frame.timeAt(x), slack_ns);
  if (!slice) return std::nullopt;
  return SliceRef{track_index, lane, *slice};
}

std::optional<CounterHit> counterAt(const Timeline& timeline, const TrackLayout& layout, const Viewport& viewport,
                                    double x, int y) {
  const LayoutRow* row = layout.rowAt(y);
  if (row == nullptr || row->track < 0) return std::nullopt;
  const auto track = static_cast<std::uint32_t>(row->track);
  if (!timeline.tracks[track].isCounter()) return std::nullopt;
  const auto value = timeline.tracks[track].counter.valueAt(viewport.frame().timeAt(x));
  if (!value) return std::nullopt;
  return CounterHit{track, *value};
}

}  // namespace torchscope::gui
