// The statistics view's table: top kernels, copies, memsets, CPU ops, CUDA API calls, syncs and
// NVTX ranges by total time over a time range (the visible one), with their share of it and their
// time per step, sortable by any column. Reads StatsIndex, so a range costs two bisections per name
// whatever the number of events. Qt-free.
//
// Error contract: nothing fails; an empty range gives an empty table.
#pragma once

#include <string>
#include <vector>

#include "torchscope/gui/Timeline.h"

namespace torchscope::gui {

class StatsTable {
 public:
  enum Column { kKind, kName, kCount, kTotal, kMean, kPerStep, kShare, kColumnCount };

  // Totals of slices starting in [begin_ns, end_ns), most total time first.
  void setRange(const Timeline& timeline, Nanos begin_ns, Nanos end_ns);
  void sort(int column, bool ascending);

  [[nodiscard]] std::size_t rows() const { return rows_.size(); }
  [[nodiscard]] const NameTotal& row(std::size_t index) const { return rows_[index]; }
  [[nodiscard]] std::string cell(std::size_t row, int column) const;
  // A number to sort by (the cell's value for numeric columns).
  [[nodiscard]] double value(std::size_t row, int column) const;
  [[nodiscard]] static std::string header(int column);
  // Steps that start in the range, per thread that records steps (0 when none do).
  [[nodiscard]] double steps() const { return steps_; }

 private:
  const Timeline* timeline_ = nullptr;
  std::vector<NameTotal> rows_;
  Nanos span_ns_ = 1;
  double steps_ = 0;
};

}  // namespace torchscope::gui
