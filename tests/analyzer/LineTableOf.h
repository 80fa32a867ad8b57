// The line table of a store, for the analyzer tests that link the analyzer (TestSupport.h stays free of it).
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "torchscope/analyzer/LineTable.h"
#include "torchscope/store/Reader.h"

namespace torchscope::analyzer::testing {

// An empty table, failing the test, when the store cannot be read.
inline LineTable linesOf(const std::string& store) {
  auto reader = store::Reader::open(store);
  EXPECT_TRUE(reader.ok()) << store;
  if (!reader.ok()) return {};
  auto table = lineTable(**reader);
  EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().message);
  return table.ok() ? *table : LineTable{};
}

}  // namespace torchscope::analyzer::testing
