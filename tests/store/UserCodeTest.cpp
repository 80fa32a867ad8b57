#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "torchscope/store/UserCode.h"

namespace torchscope::store {
namespace {

using nlohmann::json;

std::vector<std::string> strings(const json& array) { return array.get<std::vector<std::string>>(); }

// The cases the Python bridge is tested against too (tests/collector/test_bridge_parse.py).
TEST(UserCode, SharedCasesAgreeWithTheBridge) {
  std::ifstream in(std::string(TORCHSCOPE_SOURCE_DIR) + "/tests/store/data/user_code_cases.json");
  ASSERT_TRUE(in);
  const json cases = json::parse(in);
  std::size_t checked = 0;
  for (const auto& entry : cases.at("cases")) {
    const CodeRoots roots{strings(entry.at("roots").at("user")), strings(entry.at("roots").at("library"))};
    for (const auto& [file, expected] : entry.at("files").items()) {
      EXPECT_EQ(roots.isUserFile(file), expected.get<bool>()) << file;
      ++checked;
    }
  }
  EXPECT_GE(checked, 15u);
}

TEST(UserCode, RootsComeFromTheRunAttributes) {
  const std::vector<RunAttribute> attributes = {
      {std::string(kUserRootsAttribute), rootsJson({"/work/proj"})},
      {std::string(kLibraryRootsAttribute), rootsJson({"/work/proj/.venv", "/usr/lib/python3.11"})},
      {"runtime_fixes", "tf32"}};
  const CodeRoots roots = codeRootsFrom(attributes);
  EXPECT_EQ(roots.user, std::vector<std::string>{"/work/proj"});
  EXPECT_EQ(roots.library.size(), 2u);
  EXPECT_TRUE(codeRootsFrom({{std::string(kUserRootsAttribute), "not json"}}).empty());
}

TEST(UserCode, InnermostUserFrameOfAStack) {
  const CodeRoots roots{{"/work/proj"}, {"/work/proj/.venv"}};
  const auto stack = parseStack(
      R"([{"file":"/work/proj/train.py","line":42,"function":"train"},)"
      R"({"file":"/work/proj/.venv/lib/python3.11/site-packages/torch/optim/optimizer.py","line":79,"function":"_use_grad"}])");
  ASSERT_EQ(stack.size(), 2u);
  const SourceFrame* user = innermostUserFrame(stack, roots);
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(*user, (SourceFrame{"/work/proj/train.py", 42, "train"}));
  EXPECT_EQ(parseStack(stackJson(stack)), stack);
  EXPECT_EQ(innermostUserFrame(parseStack("[]"), roots), nullptr);
  EXPECT_TRUE(parseStack("").empty());
  EXPECT_TRUE(parseStack("{\"file\": 1}").empty());
}

}  // namespace
}  // namespace torchscope::store
