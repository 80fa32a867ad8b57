// The level-of-detail pyramid that slice lanes and counter lanes share: each level above the finest holds buckets
// twice as wide (bucket index >> 1), each the merge of the one or two buckets below it.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace torchscope::gui {

// Adds coarser levels on top of `levels` (finest first, not empty) up to one that holds a single bucket: a frame
// never needs fewer. Level: {int shift; std::vector<Bucket> buckets;}, Bucket: {std::int64_t bucket; ...}.
template <class Level, class Merge>
void addCoarserLevels(std::vector<Level>& levels, Merge merge) {
  while (levels.back().buckets.size() > 1 && levels.back().shift < 62) {
    const Level& finer = levels.back();
    Level coarser{finer.shift + 1, {}};
    coarser.buckets.reserve(finer.buckets.size() / 2 + 1);
    for (const auto& part : finer.buckets) {
      const std::int64_t bucket = part.bucket >> 1;
      if (coarser.buckets.empty() || coarser.buckets.back().bucket != bucket) {
        coarser.buckets.push_back(part);
        coarser.buckets.back().bucket = bucket;
      } else {
        merge(coarser.buckets.back(), part);
      }
    }
    levels.push_back(std::move(coarser));
  }
}

}  // namespace torchscope::gui
