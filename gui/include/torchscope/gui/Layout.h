// Vertical arrangement of the timeline: a header row per group (process, GPU), then each visible
// track's lanes; groups collapse to their header, which then shows the outermost lane of each of
// its tracks, and tracks collapse to their outermost lane; a counter track's row is one band of
// kCounterHeight. Pixel -> slice (or counter value) hit testing. Qt-free.
//
// Error contract: nothing fails; lookups outside the layout return null or nullopt.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "torchscope/gui/DetailSource.h"
#include "torchscope/gui/Viewport.h"

namespace torchscope::gui {

// What the user collapsed: groups by label, tracks by index.
struct LayoutState {
  std::set<std::string> collapsed_groups;
  std::set<std::uint32_t> collapsed_tracks;  // shown with their outermost lane only
};

struct LayoutRow {
  int y = 0;
  int height = 0;
  int track = -1;  // -1 for a group header
  std::string label;
  std::uint32_t lanes = 0;        // lanes shown (a track's; 1 for a collapsed group's summary)
  bool collapsed = false;         // a collapsed group, or a track showing its outermost lane only
  bool collapsible = false;       // a group, or a track with nested lanes
  std::vector<std::uint32_t> tracks;  // a group header: the tracks of its group
};

class TrackLayout {
 public:
  static constexpr int kLaneHeight = 18;
  static constexpr int kCounterHeight = 2 * kLaneHeight;  // a counter track's band on its own row
  static constexpr int kGroupHeight = 22;
  static constexpr int kTrackPadding = 4;

  TrackLayout(const Timeline& timeline, const LayoutState& state = {});
  [[nodiscard]] const std::vector<LayoutRow>& rows() const { return rows_; }
  [[nodiscard]] int height() const { return height_; }
  // The row of the track, for scrolling it into view; null when its group is collapsed.
  [[nodiscard]] const LayoutRow* rowOfTrack(std::uint32_t track) const;
  // The header row of the group the track belongs to.
  [[nodiscard]] const LayoutRow* groupOfTrack(std::uint32_t track) const;
  // The row containing content-space y, if any.
  [[nodiscard]] const LayoutRow* rowAt(int y) const;
  [[nodiscard]] static int laneTop(const LayoutRow& row, std::uint32_t lane) {
    return row.y + kTrackPadding / 2 + static_cast<int>(lane) * kLaneHeight;
  }
  // Where a track's lane is drawn: its own row, or its group's header when the group is collapsed;
  // nullopt when the lane is hidden (a collapsed track's inner lanes).
  [[nodiscard]] std::optional<int> laneY(std::uint32_t track, std::uint32_t lane) const;

 private:
  std::vector<LayoutRow> rows_;
  std::vector<int> row_of_track_;    // -1 when hidden in a collapsed group
  std::vector<int> group_of_track_;
  int height_ = 0;
};

// The slice under (x, content y), from the window's lanes where it holds the track's slices,
// accepting a few pixels of slack for narrow slices and markers.
[[nodiscard]] std::optional<SliceRef> hitTest(const Timeline& timeline, const TrackLayout& layout,
                                              const Viewport& viewport, const DetailWindow* window, double x, int y);

// The counter track whose row holds content y, and the value it held at x.
struct CounterHit {
  std::uint32_t track = 0;
  CounterValue value;
};
[[nodiscard]] std::optional<CounterHit> counterAt(const Timeline& timeline, const TrackLayout& layout,
                                                 const Viewport& viewport, double x, int y);

}  // namespace torchscope::gui
