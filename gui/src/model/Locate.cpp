// Finds where a finding shows on the timeline.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

#include "torchscope/gui/Text.h"
#include "torchscope/gui/Timeline.h"

namespace torchscope::gui {

namespace {

// Paths match when equal or when one ends with the other at a '/' (relative vs absolute paths).
bool sameFile(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) return false;
  if (a.size() < b.size()) std::swap(a, b);
  return a.ends_with(b) && (a.size() == b.size() || a[a.size() - b.size() - 1] == '/');
}

bool atLocation(const Timeline& timeline, const Slice& slice, const store::Finding& finding) {
  const Records& r = timeline.records;
  const auto matches = [&](std::string_view file, std::int64_t line) {
    return sameFile(file, finding.file) && (finding.line < 0 || line == finding.line);
  };
  const auto row = static_cast<std::size_t>(slice.row);
  switch (slice.kind) {
    case RecordKind::kSync: return matches(r.syncs[row].file, r.syncs[row].line);
    case RecordKind::kGraphBreak: return matches(r.graph_breaks[row].file, r.graph_breaks[row].line);
    case RecordKind::kCompile: return matches(r.compiles[row].co_filename, r.compiles[row].co_firstlineno);
    case RecordKind::kRecompile: return matches(r.recompiles[row].co_filename, r.recompiles[row].co_firstlineno);
    default: return false;
  }
}

// Collects every integer under a key ending in "_ns" that falls inside the timeline.
void collectTimes(const nlohmann::json& node, Nanos begin_ns, Nanos end_ns, std::vector<Nanos>& out) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (value.is_number_integer() && key.ends_with("_ns")) {
        const auto t = value.get<Nanos>();
        if (t >= begin_ns && t <= end_ns) out.push_back(t);
      } else {
        collectTimes(value, begin_ns, end_ns, out);
      }
    }
  } else if (node.is_array()) {
    for (const auto& value : node) collectTimes(value, begin_ns, end_ns, out);
  }
}

}  // namespace

FindingLocation locateFinding(const Timeline& timeline, const store::Finding& finding) {
  FindingLocation location;
  if (!finding.file.empty()) {
    for (std::uint32_t t = 0; t < timeline.tracks.size(); ++t) {
      const Track& track = timeline.tracks[t];
      if (track.kind != TrackKind::kSyncs && track.kind != TrackKind::kCompiles &&
          track.kind != TrackKind::kCompileEvents) {
        continue;
      }
      for (std::uint32_t l = 0; l < track.lanes.size(); ++l) {
        const auto& slices = track.lanes[l].slices();
        for (const Slice& slice : slices) {
          if (atLocation(timeline, slice, finding)) location.slices.push_back({t, l, slice});
        }
      }
    }
    std::sort(location.slices.begin(), location.slices.end(),
              [](const SliceRef& a, const SliceRef& b) { return a.slice.start_ns < b.slice.start_ns; });
  }
  const auto evidence = nlohmann::json::parse(finding.evidence, nullptr, /*allow_exceptions=*/false);
  if (!evidence.is_discarded()) {
    std::vector<Nanos> times;
    collectTimes(evidence, timeline.begin_ns, timeline.end_ns, times);
    if (!times.empty()) {
      const auto [low, high] = std::minmax_element(times.begin(), times.end());
      location.range = std::make_pair(*low, *high);
    }
  }
  if (!location.range && !location.slices.empty()) {
    location.range = std::make_pair(location.slices.front().slice.start_ns, location.slices.back().slice.end_ns);
  }
  return location;
}

}  // namespace torchscope::gui
