// What the timeline reads from the stores after loading, for the range on screen: the slices of
// summarised lanes (so a zoomed-in frame is exact whatever the store's size), the flows from launch
// calls to the GPU work they launched and from syncs to the GPU work they waited for, every column
// of a selected row, and the next slice matching a search. Qt-free.
//
// A DetailSource opens readers of its own: use one per thread.
//
// Error contract: open() fails like store::Reader::open(); the queries fail only on SQLite errors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torchscope/gui/PanelFields.h"
#include "torchscope/gui/Timeline.h"

namespace torchscope::store {
class Reader;
}

namespace torchscope::gui {

enum class FlowKind : std::uint8_t {
  kLaunch,  // a CUDA API call to the kernel, copy or memset it launched (same correlation id)
  kSync,    // the end of the GPU work a sync waited for to the end of the sync
};

struct FlowEnd {
  std::uint32_t track = 0;
  std::uint32_t lane = 0;
  Nanos time_ns = 0;
};

struct Flow {
  FlowEnd from;
  FlowEnd to;
  FlowKind kind = FlowKind::kLaunch;
  friend bool operator==(const Flow&, const Flow&) = default;
};

// Every slice of a time range for the tracks whose lanes are summarised, and the range's flows.
struct DetailWindow {
  Nanos begin_ns = 0;
  Nanos end_ns = 0;
  std::vector<std::vector<Lane>> lanes;  // by track; empty for tracks whose lanes are exact
  std::vector<Flow> flows;

  [[nodiscard]] bool covers(Nanos from, Nanos to) const { return begin_ns <= from && to <= end_ns; }
  // The lanes that show a track's slices in this window: fetched ones, else the track's own.
  [[nodiscard]] const std::vector<Lane>& lanesOf(const Timeline& timeline, std::uint32_t track) const;
};

// The lanes that draw a track in a frame: the window's exact ones when one of the track's lanes is
// summarised coarser than the frame and the window (may be null) covers the frame, else the track's.
[[nodiscard]] const std::vector<Lane>& lanesForFrame(const Timeline& timeline, std::uint32_t track,
                                                     const FrameScale& frame, const DetailWindow* window);

// Flows are listed only for ranges with at most this many launch calls, syncs and GPU operations.
inline constexpr std::uint64_t kMaxWindowFlows = 20000;

// Which side of a launch flow a query starts from: the CUDA API calls or the GPU work.
enum class FlowSide : std::uint8_t { kCalls, kWork };

// The SQL that joins CUDA API calls (alias `a`) with the GPU work of `gpu_table` (alias `g`) they
// launched, same pid and correlation id, starting from the rows of `from` that pass `where` (SQL over
// its alias): columns pid, tid, call start, device, stream, GPU start. The other side is found
// through its (pid, correlation_id) index, one row per launch; tests check the plan of every shape.
[[nodiscard]] std::string launchJoinSql(std::string_view gpu_table, FlowSide from, std::string_view where);

class DetailSource {
 public:
  [[nodiscard]] static Result<std::unique_ptr<DetailSource>> open(std::shared_ptr<const Timeline> timeline);
  ~DetailSource();
  DetailSource(const DetailSource&) = delete;
  DetailSource& operator=(const DetailSource&) = delete;

  [[nodiscard]] const Timeline& timeline() const { return *timeline_; }

  // The slices and flows of [begin_ns, end_ns).
  [[nodiscard]] Result<DetailWindow> fetch(Nanos begin_ns, Nanos end_ns);
  // The flows that start or end at the slice (a launch's kernel, a kernel's launch, a sync's wait).
  [[nodiscard]] Result<std::vector<Flow>> flowsOf(const SliceRef& ref);
  // Every field of the slice's row: read from the store for bulk kinds, from memory for the others.
  [[nodiscard]] Result<std::vector<Field>> describe(const SliceRef& ref);
  // The first slice named in `names` after (forward) or before `from` in time order; from nullopt:
  // the first or last one of the run.
  [[nodiscard]] Result<std::optional<SliceRef>> findNext(const std::vector<bool>& names,
                                                         const std::optional<SliceRef>& from, bool forward);

 private:
  struct Impl;
  explicit DetailSource(std::shared_ptr<const Timeline> timeline);

  std::shared_ptr<const Timeline> timeline_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchscope::gui
