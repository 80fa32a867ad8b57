// The libtorch plugin's redirection of a program's calls (collector/libtorch/src/CallRedirect.h), tried on a C
// function this test calls through its own PLT slot: getppid().
#include "CallRedirect.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace torchscope::collector::libtorch {
namespace {

constexpr pid_t kRedirected = 424242;

pid_t redirectedParent() { return kRedirected; }

TEST(CallRedirect, TheProgramsCallsReachTheReplacementUntilTheyAreRedirectedBack) {
  const pid_t parent = getppid();
  ASSERT_NE(parent, kRedirected);
  const Redirected redirected = redirectCalls("getppid", reinterpret_cast<void*>(&redirectedParent), {"libc.so"});
  EXPECT_TRUE(redirected.failures.empty());
  // "" is the main program: this test's executable.
  EXPECT_NE(std::find(redirected.objects.begin(), redirected.objects.end(), std::string()), redirected.objects.end());
  EXPECT_EQ(getppid(), kRedirected);

  void* real = dlsym(RTLD_NEXT, "getppid");
  ASSERT_NE(real, nullptr);
  (void)redirectCalls("getppid", real, {"libc.so"});
  EXPECT_EQ(getppid(), parent);
}

TEST(CallRedirect, ASymbolNothingCallsChangesNothing) {
  const Redirected redirected =
      redirectCalls("torchscope_no_such_function", reinterpret_cast<void*>(&redirectedParent), {});
  EXPECT_TRUE(redirected.objects.empty());
  EXPECT_TRUE(redirected.failures.empty());
}

}  // namespace
}  // namespace torchscope::collector::libtorch
