// `torchscope fix` on an inference job (docs/compiler.md, *Inference jobs*): judged on request latency, with the
// parity of its outputs; a fix that changes the answers is rejected.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "FixHarness.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

TEST_F(FixEndToEnd, AnInferenceJobIsJudgedOnLatencyWithTheParityOfItsOutputs) {
  const fs::path script = dir_ / "encoder_scoring.py";
  fs::copy_file(fs::path(TORCHSCOPE_COMPILER_TESTS) / ".." / "inference" / "jobs" / "encoder_scoring.py", script);
  const std::string original = readTextFile(script.string());
  const auto report = fix({"--repetitions", "2", "--fixes", "inference-mode,test-change-results", "--",
                           TORCHSCOPE_PYTHON, script.string()});
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["verdict_metric"], "request_p50_wall");

  // inference-mode changes no arithmetic: its outputs are the baseline's to the bit. Whether it is faster is a timing
  // verdict that a loaded machine can swing; its reason names the latency figures either way.
  const auto& inference = fixNamed(report, "inference-mode");
  EXPECT_TRUE(inference["parity"]["ok"].get<bool>());
  EXPECT_TRUE(inference["parity"]["checked"].get<bool>());
  EXPECT_EQ(inference["parity"]["basis"], "outputs");
  EXPECT_EQ(inference["parity"]["max_rel_diff"].get<double>(), 0.0);
  EXPECT_EQ(inference["parity"]["top1_agreement"].get<double>(), 1.0);
  const std::string reason = inference["reason"].get<std::string>();
  EXPECT_NE(reason.find("p50 request latency"), std::string::npos) << reason;
  EXPECT_NE(reason.find("p99"), std::string::npos) << reason;
  EXPECT_NE(reason.find("throughput"), std::string::npos) << reason;
  EXPECT_TRUE(inference["metrics"].contains("request_p99_wall"));

  // Every nn.Linear output scaled by 1.01: the top-1 classes hold, the scores do not.
  const auto& changing = fixNamed(report, "test-change-results");
  EXPECT_FALSE(changing["accepted"].get<bool>());
  EXPECT_FALSE(changing["parity"]["ok"].get<bool>());
  EXPECT_NEAR(changing["parity"]["max_rel_diff"].get<double>(), 0.01, 2e-3);
  EXPECT_NE(changing["reason"].get<std::string>().find("changes the answers"), std::string::npos);

  EXPECT_EQ(readTextFile(script.string()), original);  // no --write: the job's file is untouched
}

// quantize-dynamic applied, not advised: an LSTM tagger's Linear and LSTM layers in int8, its tags within the int8
// tolerance; a transformer encoder torch quantizes but cannot run is not applicable, with torch's reason.
TEST_F(FixEndToEnd, QuantizeDynamicIsMeasuredOrNotApplicableWithTorchsReason) {
  const fs::path jobs = fs::path(TORCHSCOPE_COMPILER_TESTS) / ".." / "inference" / "jobs";
  fs::copy_file(jobs / "lstm_tagger.py", dir_ / "lstm_tagger.py");
  fs::copy_file(jobs / "encoder_scoring.py", dir_ / "encoder_scoring.py");
  const auto tagger = fix({"--repetitions", "2", "--fixes", "quantize-dynamic", "--", TORCHSCOPE_PYTHON,
                           (dir_ / "lstm_tagger.py").string()});
  ASSERT_TRUE(tagger.is_object());
  const auto& quantized = fixNamed(tagger, "quantize-dynamic");
  EXPECT_EQ(quantized["kind"], "runtime");
  EXPECT_TRUE(quantized["parity"]["ok"].get<bool>()) << quantized["reason"];
  EXPECT_EQ(quantized["parity"]["basis"], "outputs");
  EXPECT_GT(quantized["parity"]["max_rel_diff"].get<double>(), 0.0);  // int8 changes the scores, within 1e-1
  EXPECT_LE(quantized["parity"]["max_rel_diff"].get<double>(), 0.1);

  const auto encoder = fix({"--repetitions", "2", "--fixes", "quantize-dynamic", "--", TORCHSCOPE_PYTHON,
                            (dir_ / "encoder_scoring.py").string()});
  ASSERT_TRUE(encoder.is_object());
  const auto& refused = fixNamed(encoder, "quantize-dynamic");
  EXPECT_EQ(refused["status"], "not applicable");
  EXPECT_NE(refused["reason"].get<std::string>().find("torch cannot run the quantized Classifier"), std::string::npos)
      << refused["reason"];
}

// Two schemes of quantize-dynamic on the Linear-heavy ranker: each measured under its own id with its outputs in
// parity, and as variants of one fix never both in the combination (which is faster is the machine's verdict).
TEST_F(FixEndToEnd, QuantizationSchemesAreMeasuredApartAndNeverCombined) {
  fs::copy_file(fs::path(TORCHSCOPE_COMPILER_TESTS) / ".." / "inference" / "jobs" / "ranking_mlp.py",
                dir_ / "ranking_mlp.py");
  const auto report = fix({"--repetitions", "2", "--fixes", "quantize-dynamic,quantize-dynamic:int8-weight-only", "--",
                           TORCHSCOPE_PYTHON, (dir_ / "ranking_mlp.py").string()});
  ASSERT_TRUE(report.is_object());
  for (const char* id : {"quantize-dynamic", "quantize-dynamic:int8-weight-only"}) {
    const auto& scheme = fixNamed(report, id);
    EXPECT_TRUE(scheme["measured"].get<bool>()) << id << ": " << scheme["reason"];
    EXPECT_TRUE(scheme["parity"]["ok"].get<bool>()) << id << ": " << scheme["reason"];
    EXPECT_GT(scheme["parity"]["max_rel_diff"].get<double>(), 0.0) << id;  // int8 changes the scores, within 1e-1
    EXPECT_LE(scheme["parity"]["max_rel_diff"].get<double>(), 0.1) << id;
  }
  if (report["combined"].is_object()) {
    const std::string combined = report["combined"]["id"].get<std::string>();
    EXPECT_EQ(combined.find("quantize-dynamic"), combined.rfind("quantize-dynamic")) << combined;
  }
}

}  // namespace
}  // namespace torchscope::compiler
