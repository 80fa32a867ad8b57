// Reading a store back in a test: failures to open or load become test failures, not crashes.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "torchscope/store/Reader.h"

namespace torchscope::testing {

// The opened store, or null (and a failed expectation).
std::unique_ptr<store::Reader> openStore(const std::filesystem::path& path);

// Every row of one table, or none (and a failed expectation).
template <class T>
std::vector<T> rows(const store::Reader& reader) {
  auto loaded = reader.load<T>();
  EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().message);
  return loaded.ok() ? std::move(*loaded) : std::vector<T>{};
}

}  // namespace torchscope::testing
