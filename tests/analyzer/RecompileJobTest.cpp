// recompile/* on real torch.compile runs on the CPU (tests/analyzer/recompiles/jobs): a decoder generating from prompts
// of several lengths, whose recompiles are all new sizes though older cache entries fail on the cache's type and
// flag, and models of a library with a compile() of their own, whose recompiles point at the user's model.compile().
#include <nlohmann/json.hpp>

#include <map>

#include "TestSupport.h"
#include "torchscope/store/Reader.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

using torchscope::testing::markedLine;
using torchscope::testing::ProgramOptions;
using torchscope::testing::ProgramOutcome;
using torchscope::testing::runTorchscope;
using torchscope::testing::runUnderTorchscope;

std::filesystem::path jobScript(const std::string& name) {
  return sourcePath("tests/analyzer/recompiles/jobs/" + name);
}

struct Recorded {
  TempDir dir;
  std::string store = (dir.path() / "run.db").string();
  std::vector<store::Recompile> recompiles;
  nlohmann::json findings;  // the recompile/* findings of `advise --format json`
};

Recorded record(const std::string& script) {
  Recorded run;
  ProgramOptions options;
  options.env = {{"OMP_NUM_THREADS", "1"}};
  const ProgramOutcome job = runUnderTorchscope(run.store, {TORCHSCOPE_PYTHON, jobScript(script).string()}, options);
  EXPECT_EQ(job.exit_code, 0) << job.out << job.err;
  auto reader = store::Reader::open(run.store);
  EXPECT_TRUE(reader.ok());
  if (reader.ok()) {
    auto rows = (*reader)->load<store::Recompile>();
    if (rows.ok()) run.recompiles = std::move(*rows);
  }
  const ProgramOutcome advice = runTorchscope("advise --format json '" + run.store + "'");
  EXPECT_EQ(advice.exit_code, 0) << advice.err;
  run.findings = nlohmann::json::array();
  const auto report = nlohmann::json::parse(advice.out, nullptr, false);
  if (report.is_object()) {
    for (const auto& finding : report["findings"]) {
      if (std::string(finding["rule"]).starts_with("recompile/")) run.findings.push_back(finding);
    }
  }
  return run;
}

// Prompts of 5, 8 and 11 tokens, 4 tokens each: the first token step and the second (the cache grows) recompile for
// sizes, then the prompt of 8 reaches the token steps' entries, which fail on its length of 8 against their one
// token and on the cache, empty again (NoneType), and the prompt's entry, which fails on the length alone; its first
// token step fails the prompt's entry (now dynamic) on the cache flag and the first token step's entry on the
// cache's length. Every recompile is a size, and the finding says so at the torch.compile call.
TEST(RecompileJob, AGenerationLoopsNewPromptLengthsAreSizesNotTheCachesTypeOrFlag) {
  const std::filesystem::path script = jobScript("decoder_generate.py");
  const Recorded run = record("decoder_generate.py");
  ASSERT_EQ(run.recompiles.size(), 4U) << run.findings.dump(2);
  for (const auto& recompile : run.recompiles) {
    EXPECT_EQ(recompile.cause, "dynamic-shape") << recompile.guard_failures;
  }
  // The prompt of 8 against the prompt's entry of 5, then its first token step against the first token step's entry.
  EXPECT_EQ(run.recompiles[2].cause_detail, "ids") << run.recompiles[2].guard_failures;
  EXPECT_NE(run.recompiles[2].guard_failures.find("NoneType"), std::string::npos) << run.recompiles[2].guard_failures;
  EXPECT_EQ(run.recompiles[3].cause_detail, "cache.keys[0]") << run.recompiles[3].guard_failures;
  EXPECT_NE(run.recompiles[3].guard_failures.find("cache.filled"), std::string::npos)
      << run.recompiles[3].guard_failures;

  ASSERT_EQ(run.findings.size(), 1U) << run.findings.dump(2);
  const auto& finding = run.findings.front();
  EXPECT_EQ(finding["rule"], "recompile/dynamic-shape");
  EXPECT_EQ(finding["count"], 4);
  EXPECT_EQ(finding["location"]["file"], script.string());
  EXPECT_EQ(finding["location"]["line"], markedLine(script, "compile"));
  EXPECT_EQ(finding["fix"]["id"], "dynamic-shapes");
  const std::string message = finding["message"];
  EXPECT_EQ(message.find("NoneType"), std::string::npos) << message;
  EXPECT_EQ(message.find("cache.filled"), std::string::npos) << message;
}

// Both models recompile once for a longer batch; the torch.compile call is the library's (inside nn.Module.compile or
// its own compile()), the line to change the user's model.compile().
TEST(RecompileJob, ALibrarysOwnCompileLeadsToTheUsersModelCompileLine) {
  const std::filesystem::path script = jobScript("library_compile.py");
  const Recorded run = record("library_compile.py");
  ASSERT_EQ(run.recompiles.size(), 2U);
  std::map<std::int64_t, std::string> compile_lines;
  for (const std::string tag : {"compile-forwarding", "compile-self"}) compile_lines[markedLine(script, tag)] = tag;
  for (const auto& recompile : run.recompiles) {
    EXPECT_EQ(recompile.cause, "dynamic-shape");
    EXPECT_EQ(recompile.entry_file, script.string()) << "entry at " << recompile.entry_file;
    EXPECT_TRUE(compile_lines.contains(recompile.entry_line)) << recompile.entry_line;
  }
  ASSERT_EQ(run.findings.size(), 2U) << run.findings.dump(2);
  for (const auto& finding : run.findings) {
    EXPECT_EQ(finding["rule"], "recompile/dynamic-shape");
    EXPECT_EQ(finding["location"]["file"], script.string());
    const std::int64_t line = finding["location"]["line"];
    ASSERT_TRUE(compile_lines.contains(line)) << finding.dump(2);
    EXPECT_FALSE(finding["evidence"].contains("framework_entry")) << finding.dump(2);
    const std::string fix = finding["fix"]["summary"];
    EXPECT_NE(fix.find("torch.compile call at " + script.string() + ":" + std::to_string(line)), std::string::npos)
        << fix;
    EXPECT_NE(fix.find("model.compile(dynamic=True)"), std::string::npos) << fix;
    EXPECT_EQ(fix.find("no torch.compile call of yours"), std::string::npos) << fix;
  }
}

}  // namespace
}  // namespace torchscope::analyzer::testing
