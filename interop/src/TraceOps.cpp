#include "TraceOps.h"

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <vector>

#include "torchscope/base/Saturating.h"

namespace torchscope::interop {

namespace {

// The members holding T's time columns, as its table declares them (Table.h): a start and an end, the same
// member twice for an instant, or none for an untimed table.
template <class T>
struct TimeMembers {
  base::Nanos T::*start = nullptr;
  base::Nanos T::*end = nullptr;
};
template <class T>
constexpr TimeMembers<T> timeMembers() {
  TimeMembers<T> members;
  store::schema::forEachColumn<T>([&](const auto& column) {
    if constexpr (std::is_same_v<typename std::decay_t<decltype(column)>::Type, base::Nanos>) {
      if (column.name == T::kTable.start) members.start = column.member;
      if (column.name == T::kTable.end) members.end = column.member;
    }
  });
  return members;
}
template <class T>
constexpr bool kTimed = !T::kTable.start.empty();

template <class T>
void append(std::vector<T>& into, std::vector<T>& from) {
  into.insert(into.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

void fillIfEmpty(std::string& into, const std::string& from) {
  if (into.empty()) into = from;
}

}  // namespace

std::int64_t ImportedTrace::malformed() const {
  std::int64_t total = 0;
  for (const auto& skipped_input : skipped) total += skipped_input.count;
  return total;
}

std::pair<base::Nanos, base::Nanos> ImportedTrace::span() const {
  base::Nanos begin = INT64_MAX;
  base::Nanos end = INT64_MIN;
  forEachTable([&]<class T>(const std::vector<T>& rows) {
    if constexpr (kTimed<T>) {
      constexpr TimeMembers<T> kTime = timeMembers<T>();
      static_assert(kTime.start != nullptr && kTime.end != nullptr, "a declared time column is a base::Nanos member");
      for (const auto& row : rows) {
        const bool unknown_end = T::kTable.open_end && row.*kTime.end < row.*kTime.start;
        begin = std::min(begin, row.*kTime.start);
        end = std::max(end, unknown_end ? row.*kTime.start : row.*kTime.end);
      }
    }
  });
  if (begin > end) return {0, -1};
  return {begin, end};
}

void shiftTimes(ImportedTrace& trace, base::Nanos delta_ns) {
  if (delta_ns == 0) return;
  trace.forEachTable([delta_ns]<class T>(std::vector<T>& rows) {
    if constexpr (kTimed<T>) {
      constexpr TimeMembers<T> kTime = timeMembers<T>();
      for (auto& row : rows) {
        row.*kTime.start = base::saturatingAdd(row.*kTime.start, delta_ns);
        const bool instant = kTime.end == kTime.start;
        const bool unknown_end = T::kTable.open_end && row.*kTime.end < 0;
        if (!instant && !unknown_end) row.*kTime.end = base::saturatingAdd(row.*kTime.end, delta_ns);
      }
    }
  });
}

void renamePid(ImportedTrace& trace, std::int64_t from, std::int64_t to) {
  trace.forEachTable([from, to]<class T>(std::vector<T>& rows) {
    store::schema::forEachColumn<T>([&](const auto& column) {
      if constexpr (std::is_same_v<typename std::decay_t<decltype(column)>::Type, std::int64_t>) {
        if (column.name != "pid") return;
        for (auto& row : rows) {
          if (row.*column.member == from) row.*column.member = to;
        }
      }
    });
  });
  // The main thread's id is the process id.
  for (auto& thread : trace.rows<store::Thread>()) {
    if (thread.tid == from) thread.tid = to;
  }
}

void appendTrace(ImportedTrace& into, ImportedTrace&& from) {
  fillIfEmpty(into.run.source, from.run.source);
  fillIfEmpty(into.run.torch_version, from.run.torch_version);
  fillIfEmpty(into.run.cuda_version, from.run.cuda_version);
  fillIfEmpty(into.run.driver_version, from.run.driver_version);
  fillIfEmpty(into.run.gpu_name, from.run.gpu_name);
  fillIfEmpty(into.run.host, from.run.host);
  from.forEachTable([&]<class T>(std::vector<T>& rows) { append(into.rows<T>(), rows); });
  append(into.skipped, from.skipped);
}

}  // namespace torchscope::interop
