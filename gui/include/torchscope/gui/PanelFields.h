// View models of the side panels, as plain tables of text: the details of a selected slice (the fields of its store
// row, in words) and the findings list. The Qt item models only adapt these.
//
// Error contract: nothing fails; an out-of-range column gives "".
#pragma once

#include <optional>
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
// A time as the Details pane shows it: "+1.234567 s into the run", from the run's first record.
[[nodiscard]] std::string runOffset(Nanos time_ns, Nanos run_begin_ns);
// A column of a bulk row (kernels, copies, API calls, ...) as the Details pane shows it: its name in words, `*_ns`
// as a duration, bytes with their unit; nothing for what the pane already shows (the row's times, process and
// thread) or what the store does not know (-1, empty).
[[nodiscard]] std::optional<Field> readableColumn(std::string_view column, std::string_view value);
// The slice's name, times and store row, and the fields of its record in words, for the small tables held in memory
// (DetailSource::describe() adds the columns of a bulk row from the store).
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
