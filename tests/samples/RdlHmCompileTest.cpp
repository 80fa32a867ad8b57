// rdl_hm's planted torch.compile problems, measured by tests/samples/check_rdl_hm.py from torch's own logs: they
// appear in the sample as written and are gone from its --tuned variant, with the same validation metric.
#include <future>
#include <iostream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "torchscope/testing/Subprocess.h"

namespace torchscope::testing {
namespace {

nlohmann::json checkerSummary(const std::string& output) {
  const std::string marker = "check_rdl_hm ";
  const auto start = output.rfind(marker);
  if (start == std::string::npos) {
    return {};
  }
  const auto end = output.find('\n', start);
  return nlohmann::json::parse(output.substr(start + marker.size(), end - start - marker.size()), nullptr, false);
}

// One test runs both variants side by side: the problems show up as written, vanish when tuned, and the
// validation metric of both agrees (parity).
TEST(RdlHm, PlantedProblemsAppearAsWrittenAndVanishWhenTuned) {
  auto baselineRun = std::async(std::launch::async, [] { return runPython("tests/samples/check_rdl_hm.py baseline"); });
  auto tunedRun = std::async(std::launch::async, [] { return runPython("tests/samples/check_rdl_hm.py tuned"); });
  const ProgramOutcome baseline = baselineRun.get();
  const ProgramOutcome tuned = tunedRun.get();

  const nlohmann::json written = checkerSummary(baseline.out);
  ASSERT_TRUE(written.is_object()) << baseline.out;
  EXPECT_EQ(baseline.exit_code, 0) << written.dump(2);
  EXPECT_GE(written["shape_recompiles"].get<int>(), 1);
  EXPECT_GE(written["lr_recompiles"].get<int>(), 1);
  EXPECT_GE(written["sample_graph_breaks"].size(), 2U);
  EXPECT_GE(written["scalar_reads"].get<int>(), written["train_steps"].get<int>());

  const nlohmann::json optimised = checkerSummary(tuned.out);
  ASSERT_TRUE(optimised.is_object()) << tuned.out;
  EXPECT_EQ(tuned.exit_code, 0) << optimised.dump(2);
  EXPECT_EQ(optimised["recompiles"].get<int>(), 0);
  EXPECT_TRUE(optimised["sample_graph_breaks"].empty());
  EXPECT_TRUE(optimised["other_graph_breaks"].empty());

  std::cout << "as written: " << written.dump() << "\ntuned: " << optimised.dump() << "\n";
  EXPECT_NEAR(written["validation_auroc"].get<double>(), optimised["validation_auroc"].get<double>(), 0.02);
  EXPECT_TRUE(numericField(baseline.out, "final ", "validation_auroc").has_value()) << baseline.out;
  EXPECT_TRUE(numericField(tuned.out, "final ", "validation_auroc").has_value()) << tuned.out;
}

}  // namespace
}  // namespace torchscope::testing
