// Benchmarks write their large synthetic stores once and reuse them between runs. A store this build cannot read
// (an older schema version, a run cut short while writing) is removed so that the benchmark writes it again.
#pragma once

#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "torchscope/store/Reader.h"

// True when PATH holds a store this build reads; false (after removing it, if it was there) when it must be written.
inline bool reusableStore(const std::string& path) {
  if (!std::filesystem::exists(path)) return false;
  if (auto reader = torchscope::store::Reader::open(path); reader) return true;
  else fmt::print("{} cannot be reused ({}): writing it again\n", path, reader.error().message);
  std::filesystem::remove(path);
  return false;
}
