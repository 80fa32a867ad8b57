// Finds where a finding shows on the timeline: a memory finding by the steps of its evidence.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

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

bool atLocation(const Timeline& timeline, const Slice& slice, const analyzer::Finding& finding) {
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

// The span of the steps a memory finding's evidence names: growth measured from `first_step` to
// `step` (a holder) or `last_step`, a peak first reached in `step`.
std::optional<std::pair<Nanos, Nanos>> stepRange(const Timeline& timeline, const nlohmann::json& evidence) {
  std::optional<std::int64_t> from;
  std::optional<std::int64_t> to;
  for (const char* key : {"first_step", "step", "last_step"}) {
    const auto it = evidence.find(key);
    if (it == evidence.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) continue;
    const auto step = it->get<std::int64_t>();
    from = std::min(from.value_or(step), step);
    to = std::max(to.value_or(step), step);
  }
  if (!from) return std::nullopt;
  Nanos low = std::numeric_limits<Nanos>::max();
  Nanos high = std::numeric_limits<Nanos>::min();
  for (const store::Step& step : timeline.records.steps) {
    if (step.index < *from || step.index > *to) continue;
    low = std::min(low, step.start_ns);
    high = std::max(high, step.end_ns);
  }
  if (low > high) return std::nullopt;
  return std::make_pair(low, high);
}

// The counter track a memory finding is about: its evidence's `series` on its `device`, else host
// RSS (a holder) or the device's reserved memory; else any counter of that device.
std::optional<std::uint32_t> counterTrack(const Timeline& timeline, const nlohmann::json& evidence) {
  const auto device = evidence.value("device", std::int64_t{-1});
  std::string series = evidence.value("series", std::string());
  if (series.empty()) series = device >= 0 ? "cuda.reserved" : "host.rss";
  std::optional<std::uint32_t> same_device;
  for (std::uint32_t t = 0; t < timeline.tracks.size(); ++t) {
    const Track& track = timeline.tracks[t];
    if (!track.isCounter() || track.device != device) continue;
    if (track.series == series) return t;
    if (!same_device) same_device = t;
  }
  return same_device;
}

}  // namespace

FindingLocation locateFinding(const Timeline& timeline, const analyzer::Finding& finding) {
  FindingLocation location;
  const nlohmann::json& evidence = finding.evidence;
  if (finding.rule.family() == "memory" && evidence.is_object()) {
    location.track = counterTrack(timeline, evidence);
    location.range = stepRange(timeline, evidence);
    if (location.range) return location;
  }
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
  std::vector<Nanos> times;
  collectTimes(evidence, timeline.begin_ns, timeline.end_ns, times);
  if (!times.empty()) {
    const auto [low, high] = std::minmax_element(times.begin(), times.end());
    location.range = std::make_pair(*low, *high);
  }
  if (!location.range && !location.slices.empty()) {
    location.range = std::make_pair(location.slices.front().slice.start_ns, location.slices.back().slice.end_ns);
  }
  return location;
}

}  // namespace torchscope::gui
