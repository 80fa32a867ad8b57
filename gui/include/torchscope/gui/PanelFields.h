// View models of the side panels, as plain tables of text: the details of a selected slice
// (every column of its store row) and the findings list. The Qt item models only adapt these.
//
// Error contract: nothing fails; an out-of-range column gives "".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "torchscope/gui/Timeline.h"

namespace torchscope::gui {

struct Field {
  std::string name;
  std::string value;
};

// The store table a kind of slice comes from ("kernels", "syncs", ...).
[[nodiscard]] std::string_view tableOf(RecordKind kind);
// The slice's label, times and table; every field of its row for the small tables held in memory
// (DetailSource::describe() reads the rest of a bulk row from the store).
[[nodiscard]] std::vector<Field> describe(const Timeline& timeline, const SliceRef& ref);
// Every field of a finding.
[[nodiscard]] std::vector<Field> describe(const analyzer::Finding& finding);

// The findings panel: one row per finding, most impact first.
class FindingsTable {
 public:
  enum Column { kSeverity, kRule, kTitle, kLocation, kImpact, kColumnCount };

  explicit FindingsTable(std::vector<analyzer::Finding> findings);
  [[nodiscard]] std::size_t rows() const { return findings_.size(); }
  [[nodiscard]] static std::string header(int column);
  [[nodiscard]] std::string cell(std::size_t row, int column) const;
  [[nodiscard]] const analyzer::Finding& finding(std::size_t row) const { return findings_[row]; }

 private:
  std::vector<analyzer::Finding> findings_;
};

}  // namespace torchscope::gui
