// `torchscope optimize` on exported programs (torch.export.save): AOTInductor packages compiled by the venv's torch
// and run by torchscope-optimize with libtorch. The programs are tiny (tests/corpus/optimize/make_program.py); each
// AOTInductor compile still takes ~10 s of C++ compilation, so the tests build few variants.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "torchscope/compiler/Process.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope::compiler {
namespace {

namespace fs = std::filesystem;

struct ToolRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class OptimizeProgram : public ::testing::Test {
 protected:
  fs::path dir() const { return scratch_.path(); }
  fs::path workspace() const { return scratch_.path() / "workspace"; }

  fs::path makeProgram(const std::string& name) {
    const fs::path out = dir() / (name + ".pt2");
    ProcessSpec make;
    make.argv = {TORCHSCOPE_PYTHON, TORCHSCOPE_SOURCE_DIR "/tests/corpus/optimize/make_program.py", name, out.string()};
    make.stderr_path = (dir() / "make.err").string();
    auto made = runProcess(make);
    EXPECT_TRUE(made.ok() && made->exit_code == 0) << readTextFile(make.stderr_path);
    return out;
  }

  // `stdin_path`: the file torchscope reads as its standard input (empty: the test's own).
  ToolRun optimize(std::vector<std::string> arguments, const std::string& stdin_path = "") {
    ProcessSpec run;
    if (!stdin_path.empty()) run.argv = {"sh", "-c", "exec \"$0\" \"$@\" < \"$TORCHSCOPE_TEST_STDIN\""};
    run.environment["TORCHSCOPE_TEST_STDIN"] = stdin_path;
    // The test's own options first: after a job's `--` they would be the job's.
    run.argv.insert(run.argv.end(), {TORCHSCOPE_BINARY_DIR "/bin/torchscope", "optimize", "--workspace",
                                     workspace().string(), "--rounds", "3", "--iterations", "8"});
    run.argv.insert(run.argv.end(), arguments.begin(), arguments.end());
    run.environment["TORCHSCOPE_PYTHON"] = TORCHSCOPE_PYTHON;  // libtorch and the compiles come from the job's torch
    run.stdout_path = (dir() / "out.txt").string();
    run.stderr_path = (dir() / "err.txt").string();
    auto result = runProcess(run);
    EXPECT_TRUE(result.ok());
    return {result.ok() ? result->exit_code : -1, readTextFile(run.stdout_path), readTextFile(run.stderr_path)};
  }

  static std::map<std::string, nlohmann::json> byName(const nlohmann::json& report) {
    std::map<std::string, nlohmann::json> variants;
    for (const auto& variant : report["variants"]) variants[variant["name"]] = variant;
    return variants;
  }

  // Nothing half-written is left in the workspace: every file there is a whole package or its record.
  void expectNoPartialPackage() const {
    if (!fs::exists(workspace())) return;
    for (const auto& entry : fs::directory_iterator(workspace())) {
      EXPECT_EQ(entry.path().string().find("partial"), std::string::npos) << entry.path();
    }
  }

  torchscope::testing::TempDir scratch_;
};

std::string fileBytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

TEST_F(OptimizeProgram, MeasuresAotInductorVariantsWithADynamicBatch) {
  const fs::path program = makeProgram("cnn");
  // Exported with a batch of 2; measured with 3: the batch dimension is dynamic.
  ToolRun run = optimize({program.string(), "--input", "3,3,16,16", "--variant", "aoti", "--variant", "channels-last",
                          "--variant", "bf16", "--variant", "int8", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  EXPECT_EQ(report["kind"], "exported_program");
  EXPECT_EQ(report["inputs"], "3x3x16x16");
  auto variants = byName(report);
  ASSERT_TRUE(variants.count("eager (exported program)"));
  EXPECT_DOUBLE_EQ(variants["eager (exported program)"]["speedup"]["median"].get<double>(), 1.0);
  for (const char* name : {"eager (exported program)", "aoti", "channels-last", "bf16", "int8"}) {
    ASSERT_TRUE(variants.count(name)) << name;
    const auto& variant = variants[name];
    ASSERT_TRUE(variant["available"].get<bool>()) << variant.dump();
    const double p50 = variant["latency_ms"]["p50"]["value"].get<double>();
    EXPECT_GT(p50, 0) << name;
    EXPECT_GE(variant["latency_ms"]["p99"]["value"].get<double>(), p50) << name;
    EXPECT_LE(variant["latency_ms"]["p50"]["ci_low"].get<double>(),
              variant["latency_ms"]["p50"]["ci_high"].get<double>());
    if (std::string(name) != "int8") {
      EXPECT_TRUE(variant["parity"]["ok"].get<bool>()) << variant.dump();
    }
    if (std::string(name) == "eager (exported program)") continue;
    EXPECT_TRUE(variant["parity"].contains("top1_agreement")) << variant.dump();  // 4 class scores per row
    EXPECT_GT(variant["compile_s"].get<double>(), 0) << name;
    EXPECT_FALSE(variant["cached"].get<bool>());
    EXPECT_TRUE(fs::is_regular_file(variant["package"].get<std::string>())) << variant.dump();
    EXPECT_EQ(variant["package_bytes"].get<std::int64_t>(),
              static_cast<std::int64_t>(fs::file_size(variant["package"].get<std::string>())));
  }
  EXPECT_LT(variants["aoti"]["parity"]["max_rel_diff"].get<double>(), 1e-4);
  EXPECT_TRUE(variants.count(report["recommendation"]["variant"].get<std::string>()))
      << report["recommendation"].dump();
  expectNoPartialPackage();

  // Again: the packages come from the workspace's cache, keyed by the program's bytes.
  run = optimize({program.string(), "--variant", "aoti", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto again = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(again.is_object()) << run.out;
  EXPECT_EQ(again["inputs"], "2x3x16x16");  // the example inputs the program was exported with
  variants = byName(again);
  EXPECT_TRUE(variants["aoti"]["cached"].get<bool>()) << variants["aoti"].dump();

  // The text report names each variant's package and the recommendation.
  run = optimize({program.string(), "--variant", "aoti"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("recommendation: "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("aoti.pt2"), std::string::npos) << run.out;
}

TEST_F(OptimizeProgram, AVariantThatFailsAndOneWhoseParityFailsAreTheirResults) {
  const fs::path sparse = makeProgram("sparse");
  ToolRun run = optimize({sparse.string(), "--variant", "aoti", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  auto variants = byName(report);
  EXPECT_FALSE(variants["aoti"]["available"].get<bool>()) << variants["aoti"].dump();
  EXPECT_FALSE(variants["aoti"]["note"].get<std::string>().empty());  // torch's reason
  EXPECT_EQ(report["recommendation"]["variant"], "eager (exported program)");

  const fs::path cancel = makeProgram("cancel");
  run = optimize({cancel.string(), "--variant", "bf16", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  variants = byName(report);
  ASSERT_TRUE(variants["bf16"]["available"].get<bool>()) << variants["bf16"].dump();
  EXPECT_FALSE(variants["bf16"]["parity"]["ok"].get<bool>()) << variants["bf16"].dump();
  EXPECT_GT(variants["bf16"]["parity"]["max_rel_diff"].get<double>(), 5e-2);
  EXPECT_NE(report["recommendation"]["variant"], "bf16");
  expectNoPartialPackage();
}

TEST_F(OptimizeProgram, BadInputIsOneLineAndTouchesNothing) {
  const fs::path program = makeProgram("cnn");
  const std::string before = fileBytes(program);
  const auto oneLine = [](const ToolRun& run) { return !run.err.empty() && run.err.find('\n') == run.err.size() - 1; };

  // Input shapes the program does not take (the channels are static).
  ToolRun run = optimize({program.string(), "--input", "2,4,16,16"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(oneLine(run)) << run.err;
  EXPECT_NE(run.err.find("Nx3x16x16"), std::string::npos) << run.err;

  // A file that is no model.
  const fs::path text = dir() / "notes.pt2";
  std::ofstream(text) << "not a model\n";
  run = optimize({text.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(oneLine(run)) << run.err;
  EXPECT_NE(run.err.find("neither an exported program"), std::string::npos) << run.err;

  // A model library of torch._export.aot_compile (the torch 2.3-2.5 API): an ELF file with AOTInductor's C ABI.
  const fs::path library = dir() / "model.so";
  std::ofstream(library, std::ios::binary)
      << '\x7f' << "ELF" << std::string(64, '\0') << "AOTInductorModelContainerCreateWithDevice";
  run = optimize({library.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(oneLine(run)) << run.err;
  EXPECT_NE(run.err.find("is a model library of torch._export.aot_compile"), std::string::npos) << run.err;

  // A program saved by another torch release (its serialization schema is newer than this torch reads).
  const fs::path other = dir() / "other.pt2";
  ProcessSpec rewrite;
  rewrite.argv = {TORCHSCOPE_PYTHON, "-c",
                  "import json, sys, zipfile\n"
                  "src, dst = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2], 'w')\n"
                  "for item in src.infolist():\n"
                  "    data = src.read(item)\n"
                  "    if item.filename.endswith('/models/model.json'):\n"
                  "        model = json.loads(data)\n"
                  "        model['schema_version']['major'] += 1\n"
                  "        model['torch_version'] = '9.0.0'\n"
                  "        data = json.dumps(model).encode()\n"
                  "    dst.writestr(item, data)\n"
                  "dst.close()\n",
                  program.string(), other.string()};
  auto rewritten = runProcess(rewrite);
  ASSERT_TRUE(rewritten.ok() && rewritten->exit_code == 0);
  run = optimize({other.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(oneLine(run)) << run.err;
  EXPECT_NE(run.err.find("saved by torch 9.0.0"), std::string::npos) << run.err;

  EXPECT_EQ(fileBytes(program), before);
  expectNoPartialPackage();
}

TEST_F(OptimizeProgram, ExportsTheOutermostModuleOfAJobAndKeepsTheProgram) {
  // A text classifier in the style of the transformers quick tour: model(**inputs) with batches of 8, 8, 4 and 16.
  const fs::path program = dir() / "classifier.pt2";
  ToolRun run = optimize({"--export", "--program", program.string(), "--variant", "aoti", "--format", "json", "--",
                          TORCHSCOPE_PYTHON, TORCHSCOPE_SOURCE_DIR "/tests/corpus/optimize/infer_text.py"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("exported BertForSequenceClassification (called at "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("infer_text.py:14, batch dynamic"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("batch of 16: predicted classes"), std::string::npos);  // the job's output, on stderr
  EXPECT_TRUE(fs::is_regular_file(program));
  const auto report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  EXPECT_EQ(report["inputs"], "8x32 Long, 8x32 Long");  // input_ids and attention_mask of the first call
  // The job's own module, timed in the job's process after it ended, is the baseline and the parity reference.
  EXPECT_EQ(report["baseline"], "eager (the job's module)");
  EXPECT_EQ(report["variants"][0]["name"], "eager (the job's module)");
  EXPECT_NE(report["variants"][0]["note"].get<std::string>().find("BertForSequenceClassification (forward at "),
            std::string::npos);
  EXPECT_NE(report["variants"][0]["note"].get<std::string>().find("modeling_bert.py:"), std::string::npos)
      << "the forward under its decorators: " << report["variants"][0]["note"];
  auto variants = byName(report);
  EXPECT_DOUBLE_EQ(variants["eager (the job's module)"]["speedup"]["median"].get<double>(), 1.0);
  EXPECT_TRUE(variants["eager (the job's module)"]["parity"]["ok"].get<bool>()) << report["variants"].dump();
  EXPECT_GT(variants["eager (the job's module)"]["latency_ms"]["p50"]["value"].get<double>(), 0.0);
  EXPECT_TRUE(variants["eager (exported program)"]["parity"]["ok"].get<bool>()) << report["variants"].dump();
  ASSERT_TRUE(variants["aoti"]["available"].get<bool>()) << variants["aoti"].dump();
  EXPECT_TRUE(variants["aoti"]["parity"]["ok"].get<bool>()) << variants["aoti"].dump();

  // The kept program is the user's now: a second export does not overwrite it, and it takes another batch size.
  const std::string kept = fileBytes(program);
  run = optimize({"--export", "--program", program.string(), "--", TORCHSCOPE_PYTHON,
                  TORCHSCOPE_SOURCE_DIR "/tests/corpus/optimize/infer_text.py"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(fileBytes(program), kept);
  run = optimize({program.string(), "--input", "3,32", "--input", "3,32", "--variant", "aoti", "--format", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(byName(nlohmann::json::parse(run.out))["aoti"]["cached"].get<bool>());
}

TEST_F(OptimizeProgram, AJobModuleThatAnswersDifferentlyCallToCallIsNoReferenceAndNothingIsRecommended) {
  // A sampler served from standard input whose forward reads and advances a step counter: torch.export fixes the
  // counter's value, the job's module goes on counting, so no package can be checked against its answers.
  const fs::path requests = dir() / "requests.txt";
  std::ofstream(requests) << "4\n4\n2\n";
  const fs::path program = dir() / "sampler.pt2";
  ToolRun run = optimize({"--export", "--program", program.string(), "--variant", "aoti", "--format", "json", "--",
                          TORCHSCOPE_PYTHON, TORCHSCOPE_SOURCE_DIR "/tests/corpus/optimize/serve_stdin_sampler.py"},
                         requests.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("served 3 requests, last batch (2, 16)"), std::string::npos) << run.err;  // its stdin
  const auto report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out;
  auto variants = byName(report);
  const auto& job = variants["eager (the job's module)"];
  EXPECT_FALSE(job["parity"]["ok"].get<bool>()) << job;
  EXPECT_GT(job["parity"]["max_rel_diff"].get<double>(), 1e-3) << job;  // scale 1/4, then 1/5
  EXPECT_EQ(report["recommendation"]["variant"], "none");
  EXPECT_NE(report["recommendation"]["reason"].get<std::string>().find(
                "answers the same inputs differently from one call to the next"),
            std::string::npos)
      << report["recommendation"];
  EXPECT_TRUE(fs::is_regular_file(program));  // kept: the user may want to look at it
}

TEST_F(OptimizeProgram, AModuleThatCannotBeExportedIsOneLineWithItsCall) {
  const fs::path program = dir() / "gated.pt2";
  ToolRun run = optimize({"--export", "--program", program.string(), "--", TORCHSCOPE_PYTHON,
                          TORCHSCOPE_SOURCE_DIR "/tests/corpus/optimize/infer_branch.py"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  // torchscope's line; torch prints its graph to the job's stderr, which torchscope copies to its own first.
  const std::size_t at = run.err.find("torchscope: ");
  ASSERT_NE(at, std::string::npos) << run.err;
  const std::string last = run.err.substr(at, run.err.find('\n', at) - at);
  EXPECT_NE(last.find("cannot export GatedHead"), std::string::npos) << run.err;
  EXPECT_NE(last.find("infer_branch.py:20"), std::string::npos) << last;  // the job's call
  EXPECT_NE(last.find("infer_branch.py:12"), std::string::npos) << last;  // the branch torch cannot trace
  EXPECT_FALSE(fs::exists(program));
  for (const auto& entry : fs::directory_iterator(dir())) {
    EXPECT_EQ(entry.path().string().find("partial"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace torchscope::compiler
