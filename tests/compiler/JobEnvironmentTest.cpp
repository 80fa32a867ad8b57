// The job's environment under torchscope: the user's LD_PRELOAD, PYTHONPATH and torch-import hooks kept, torchscope's
// added after them once; the same request gives `run` and `fix` the same environment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchscope/compiler/FixCatalog.h"
#include "torchscope/compiler/JobEnvironment.h"

namespace torchscope::compiler {
namespace {

constexpr const char* kCollector = "/opt/torchscope/lib/libtorchscope_collector.so";

TEST(JobEnvironment, TheUsersPreloadsComeFirstAndTheCollectorAfterThemOnce) {
  EXPECT_EQ(preloadWithCollector("", kCollector), kCollector);
  EXPECT_EQ(preloadWithCollector("/usr/lib/libtcmalloc.so.4", kCollector),
            std::string("/usr/lib/libtcmalloc.so.4:") + kCollector);
  // ld.so separates entries with colons and spaces alike; empty entries say nothing.
  EXPECT_EQ(preloadWithCollector(" /a/libjemalloc.so.2  /b/libx.so::", kCollector),
            std::string("/a/libjemalloc.so.2:/b/libx.so:") + kCollector);
  // A job started under a job torchscope already traces keeps one copy of the collector, where the user put it.
  EXPECT_EQ(preloadWithCollector(std::string(kCollector) + ":/a/libjemalloc.so.2", kCollector),
            std::string(kCollector) + ":/a/libjemalloc.so.2");
}

// Sets variables for one test and gives the process its old values back after it.
class JobEnvironmentOf : public ::testing::Test {
 protected:
  void give(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
    if (value != nullptr) {
      setenv(name.c_str(), value, 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  void TearDown() override {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(JobEnvironmentOf, TheUsersPathsAndHooksStayFirstAndTorchscopesFollow) {
  give("LD_PRELOAD", "/usr/lib/libtcmalloc.so.4");
  give("PYTHONPATH", "/home/u/src");
  give("TORCHSCOPE_TORCH_IMPORT_HOOKS", "mine:setup");
  give("TORCHSCOPE_FIXES", nullptr);
  JobRequest request;
  request.collector_library = kCollector;
  request.store_path = "/tmp/run.db";
  request.compiler_python_dir = "/opt/torchscope/share/torchscope/compiler";
  request.launcher = true;
  request.runtime_fixes = "eager";
  request.command_line = "python train.py";
  const JobEnvironment fix = jobEnvironment(request);
  EXPECT_EQ(fix.set.at("LD_PRELOAD"), std::string("/usr/lib/libtcmalloc.so.4:") + kCollector);
  EXPECT_EQ(fix.set.at("PYTHONPATH"), "/home/u/src:/opt/torchscope/share/torchscope/compiler");
  EXPECT_EQ(fix.set.at("TORCHSCOPE_TORCH_IMPORT_HOOKS"), std::string("mine:setup,") + kRuntimeFixesHook);
  EXPECT_EQ(fix.set.at("TORCHSCOPE_FIXES"), "eager");
  EXPECT_EQ(fix.set.at("TORCHSCOPE_OUTPUT"), "/tmp/run.db");
  EXPECT_EQ(fix.set.at("TORCHSCOPE_COMMAND_LINE"), "python train.py");
  // A job started under a traced parent is a job of its own: its first process writes the store.
  EXPECT_NE(std::find(fix.unset.begin(), fix.unset.end(), "TORCHSCOPE_ROOT_PID"), fix.unset.end());

  // `run` with the same fixes in the environment: the same preloads, hooks and store, and the job's own PYTHONPATH.
  give("TORCHSCOPE_FIXES", "eager");
  JobRequest run;
  run.collector_library = kCollector;
  run.store_path = "/tmp/run.db";
  run.compiler_python_dir = request.compiler_python_dir;
  const JobEnvironment under_run = jobEnvironment(run);
  for (const char* name :
       {"LD_PRELOAD", "TORCHSCOPE_TORCH_IMPORT_HOOKS", "TORCHSCOPE_TORCH_IMPORT_PATH", "TORCHSCOPE_OUTPUT"}) {
    EXPECT_EQ(under_run.set.at(name), fix.set.at(name)) << name;
  }
  EXPECT_EQ(under_run.set.count("PYTHONPATH"), 0U);
  EXPECT_NE(std::find(under_run.unset.begin(), under_run.unset.end(), "TORCHSCOPE_COMMAND_LINE"),
            under_run.unset.end());
}

TEST_F(JobEnvironmentOf, ASettingGivenEmptyIsRemovedAndTheRestOfTheEnvironmentStays) {
  give("TORCHSCOPE_STATUS_LINE", "1");
  give("TORCHSCOPE_FIXES", nullptr);
  give("JOB_ENVIRONMENT_TEST_OWN", "kept");
  JobRequest request;
  request.settings.emplace_back(&base::settings::kStatusLine, "");
  request.settings.emplace_back(&base::settings::kSampleHz, "250");
  const JobEnvironment changes = jobEnvironment(request);
  EXPECT_EQ(changes.set.count("LD_PRELOAD"), 0U) << "without the collector, the preloads are the user's";
  EXPECT_EQ(changes.set.count("TORCHSCOPE_TORCH_IMPORT_HOOKS"), 0U) << "no fixes, no hook";
  const std::vector<std::string> entries = environmentWith(changes);
  const auto has = [&](const std::string& entry) {
    return std::find(entries.begin(), entries.end(), entry) != entries.end();
  };
  EXPECT_TRUE(has("JOB_ENVIRONMENT_TEST_OWN=kept"));
  EXPECT_TRUE(has("TORCHSCOPE_SAMPLE_HZ=250"));
  EXPECT_FALSE(has("TORCHSCOPE_STATUS_LINE=1"));
}

TEST(JobEnvironment, AListGetsAnEntryOnceAtItsEnd) {
  EXPECT_EQ(listWith("", "/c", ':'), "/c");
  EXPECT_EQ(listWith("/a:/b", "/c", ':'), "/a:/b:/c");
  EXPECT_EQ(listWith("/a:/c", "/c", ':'), "/a:/c");
  EXPECT_EQ(listWith("m:f", "m:f", ','), "m:f");
  EXPECT_EQ(listWith("/a", "", ':'), "/a");
}

}  // namespace
}  // namespace torchscope::compiler
