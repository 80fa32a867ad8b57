// The host RSS the collector records with each step end: read from /proc/self/statm by hand (HostMemory.cpp), it
// must agree with the kernel's VmRSS of /proc/self/status and follow memory the process touches.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "HostMemory.h"

namespace {

std::int64_t statusRssBytes() {
  std::FILE* status = std::fopen("/proc/self/status", "re");
  if (status == nullptr) return -1;
  char line[256];
  std::int64_t rss = -1;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) rss = std::atoll(line + 6) * 1024;
  }
  std::fclose(status);
  return rss;
}

TEST(HostMemory, CurrentRssAgreesWithTheKernelsVmRssAndFollowsTouchedMemory) {
  constexpr std::int64_t kTouched = std::int64_t{64} << 20;
  constexpr std::int64_t kSlack = std::int64_t{4} << 20;  // what the process itself may allocate between two reads
  const std::int64_t before = torchscope::collector::currentRssBytes();
  ASSERT_GT(before, 0);
  EXPECT_NEAR(static_cast<double>(before), static_cast<double>(statusRssBytes()), static_cast<double>(kSlack));
  std::vector<char> touched(static_cast<std::size_t>(kTouched), 1);
  const std::int64_t after = torchscope::collector::currentRssBytes();
  EXPECT_NEAR(static_cast<double>(after), static_cast<double>(statusRssBytes()), static_cast<double>(kSlack));
  EXPECT_GE(after - before, kTouched - kSlack) << "64 MiB touched";
  EXPECT_EQ(touched.back(), 1);
}

}  // namespace
