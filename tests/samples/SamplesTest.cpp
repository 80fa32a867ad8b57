// Every Python sample runs at its smallest scale, as written and tuned, and prints its final metric line.
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "torchscope/testing/Subprocess.h"

namespace torchscope::testing {
namespace {

struct SampleCase {
  std::string module;  // samples.<module>.train
  std::string metric;  // a field of the "final " line
  bool tuned;
};

std::string caseName(const ::testing::TestParamInfo<SampleCase>& info) {
  return info.param.module + (info.param.tuned ? "_tuned" : "_baseline");
}

class SmallSample : public ::testing::TestWithParam<SampleCase> {};

TEST_P(SmallSample, RunsAtTinyScaleAndPrintsItsFinalMetric) {
  const SampleCase& sample = GetParam();
  const ProgramOutcome run =
      runPython("-m samples." + sample.module + ".train --scale tiny" + (sample.tuned ? " --tuned" : ""));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto fields = lineFields(run.out, "final ");
  EXPECT_EQ(fields.count("variant") ? fields.at("variant") : "", sample.tuned ? "tuned" : "baseline") << run.out;
  EXPECT_TRUE(numericField(run.out, "final ", sample.metric).has_value()) << run.out;
}

INSTANTIATE_TEST_SUITE_P(Samples, SmallSample,
                         ::testing::Values(SampleCase{"cnn", "validation_accuracy", false},
                                           SampleCase{"cnn", "validation_accuracy", true},
                                           SampleCase{"transformer", "validation_accuracy", false},
                                           SampleCase{"transformer", "validation_accuracy", true},
                                           SampleCase{"eager_loop", "validation_loss", false},
                                           SampleCase{"eager_loop", "validation_loss", true}),
                         caseName);

std::string lineOf(const std::string& path, int number) {
  std::ifstream file(path);
  std::string line;
  for (int current = 1; std::getline(file, line); ++current) {
    if (current == number) {
      return line;
    }
  }
  return {};
}

// The list the demo and its tests read must point at the lines that really hold each problem.
TEST(RdlHm, PlantedProblemListPointsAtTheCode) {
  std::ifstream listing(std::string(TORCHSCOPE_SOURCE_DIR) + "/samples/rdl_hm/planted_problems.json");
  const nlohmann::json planted = nlohmann::json::parse(listing, nullptr, false);
  ASSERT_TRUE(planted.contains("problems"));
  ASSERT_GE(planted["problems"].size(), 6U);
  for (const auto& problem : planted["problems"]) {
    const std::string path = std::string(TORCHSCOPE_SOURCE_DIR) + "/" + problem["file"].get<std::string>();
    const std::string line = lineOf(path, problem["line"].get<int>());
    EXPECT_NE(line.find(problem["snippet"].get<std::string>()), std::string::npos)
        << problem["id"] << " at " << problem["file"] << ":" << problem["line"] << " reads: " << line;
  }
}

TEST(RdlHm, RejectsAnUnknownScaleWithExitCode2) {
  const ProgramOutcome run = runPython("-m samples.rdl_hm.train --scale enormous");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("invalid choice"), std::string::npos) << run.out;
}

TEST(RdlHm, GeneratedDatabaseIsDeterministicAndHeavyTailed) {
  const ProgramOutcome run = runPython(
      "-c \"import torch; from samples.rdl_hm.database import generate_database; "
      "from samples.rdl_hm.scales import SCALES; a = generate_database(SCALES['tiny'], 3); "
      "b = generate_database(SCALES['tiny'], 3); c = generate_database(SCALES['tiny'], 4); "
      "counts = torch.bincount(a.customer_id).float(); "
      "print('same', torch.equal(a.article_id, b.article_id) and torch.equal(a.t_dat, b.t_dat), "
      "'different', not torch.equal(a.t_dat[:100], c.t_dat[:100]) or a.t_dat.numel() != c.t_dat.numel(), "
      "'tail', bool(counts.quantile(0.99) > 5 * counts.median()))\"");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("same True different True tail True"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace torchscope::testing
