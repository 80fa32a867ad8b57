// The "Compiled regions" tab: the analyzer's compiled-region table (`advise --regions`) as rows of text cells, one
// per region the job compiled. Qt-free.
//
// Error contract: nothing fails; a store the table cannot be built from gives no rows and `error`.
#pragma once

#include <string>
#include <vector>

#include "torchscope/analyzer/Regions.h"

namespace torchscope::gui {

class RegionsPanel {
 public:
  enum Column {
    kRegion,
    kCompiledAt,
    kCalledAt,
    kCompile,
    kGraphs,
    kGraphBreaks,
    kRecompiles,
    kCalls,
    kWallPerCall,
    kCpuPerCall,
    kStepShare,
    kEager,
    kCudaGraphs,
    kSpeedup,
    kPayoff,
    kColumnCount
  };

  // The table of the store at `path` (analyzer::regionTable).
  void load(const std::string& path);
  void setTable(analyzer::RegionTable table);

  [[nodiscard]] std::size_t rows() const { return table_.regions.size(); }
  [[nodiscard]] const analyzer::Region& region(std::size_t row) const { return table_.regions[row]; }
  [[nodiscard]] std::string cell(std::size_t row, int column) const;
  [[nodiscard]] static std::string header(int column);
  // One line over the table: the run's compile time, its steady-state step, and whether compiling paid.
  [[nodiscard]] std::string summary() const;
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  analyzer::RegionTable table_;
  std::string error_;
};

}  // namespace torchscope::gui
