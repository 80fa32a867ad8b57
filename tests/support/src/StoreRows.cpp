#include "torchscope/testing/StoreRows.h"

namespace torchscope::testing {

std::unique_ptr<store::Reader> openStore(const std::filesystem::path& path) {
  auto reader = store::Reader::open(path.string());
  EXPECT_TRUE(reader.ok()) << path << ": " << (reader.ok() ? "" : reader.error().message);
  return reader.ok() ? std::move(reader.value()) : nullptr;
}

}  // namespace torchscope::testing
