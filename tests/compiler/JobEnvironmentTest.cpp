// The job's environment under torchscope: the user's LD_PRELOAD kept, the collector added after it once.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace torchscope::compiler
