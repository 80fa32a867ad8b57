#include "torchscope/analyzer/IdleGaps.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "torchscope/base/Saturating.h"

namespace torchscope::analyzer {

namespace {

constexpr std::size_t kIdsPerQuery = 500;  // literal IN lists stay well below SQLite's limits

struct Launch {
  std::int64_t tid = -1;
  base::Nanos start_ns = 0;
};

}  // namespace

std::string_view idleCauseLabel(IdleCause cause) {
  switch (cause) {
    case IdleCause::kUnknown: return "cause unknown";
    case IdleCause::kHostLate: return "waiting for the host";
    case IdleCause::kQueued: return "waiting on a dependency";
  }
  return "";
}

Result<void> explainIdleGaps(const store::Reader& reader, std::vector<IdleGap>& gaps, base::Nanos offset_ns) {
  std::map<std::int64_t, std::vector<std::int64_t>> wanted;  // pid -> correlation ids
  for (const auto& gap : gaps) {
    if (gap.correlation_id >= 0) wanted[gap.pid].push_back(gap.correlation_id);
  }
  std::map<std::int64_t, std::unordered_map<std::int64_t, Launch>> launches;
  for (auto& [pid, ids] : wanted) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    auto& of_process = launches[pid];
    for (std::size_t begin = 0; begin < ids.size(); begin += kIdsPerQuery) {
      std::string list;
      for (std::size_t i = begin; i < std::min(ids.size(), begin + kIdsPerQuery); ++i) {
        list += (list.empty() ? "" : ",") + std::to_string(ids[i]);
      }
      // The earliest call of a correlation id is the launch (a few APIs record a driver call inside).
      auto done = reader.query(
          fmt::format(
              "SELECT correlation_id, tid, min(start_ns) FROM api_calls WHERE pid = ? AND correlation_id IN ({}) "
              "GROUP BY correlation_id",
              list),
          [&](const store::Row& row) {
            of_process[row.integer(0)] = {row.integer(1), base::saturatingAdd(row.integer(2), offset_ns)};
          },
          {pid});
      if (!done) return done.error();
    }
  }
  for (auto& gap : gaps) {
    const auto process = launches.find(gap.pid);
    if (process == launches.end()) continue;
    const auto launch = process->second.find(gap.correlation_id);
    if (launch == process->second.end()) continue;
    gap.launch_tid = launch->second.tid;
    gap.launch_start_ns = launch->second.start_ns;
    gap.cause = launch->second.start_ns >= gap.start_ns ? IdleCause::kHostLate : IdleCause::kQueued;
  }
  return {};
}

}  // namespace torchscope::analyzer
