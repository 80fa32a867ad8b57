// The live status line of `torchscope run`: on a terminal (a pseudo-terminal here) one line rewritten in place with
// the job's elapsed time, steps and compilations, cleared at the end; nothing of it when stderr is a pipe.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "torchscope/store/Writer.h"
#include "torchscope/testing/Paths.h"
#include "torchscope/testing/Subprocess.h"
#include "torchscope/testing/TempDir.h"

namespace torchscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> liveJob(const testing::TempDir& dir) {
  return {testing::torchscopeExecutable().string(), "run", "-o", dir.file("live.db"), "--", TORCHSCOPE_PYTHON,
          testing::sourcePath("tests/cli/scripts/live_job.py").string()};
}

// Runs argv with a pseudo-terminal as its stdin, stdout and stderr; returns what it wrote there.
testing::ProgramOutcome runOnTerminal(const std::vector<std::string>& argv) {
  int master = -1;
  winsize size{};
  size.ws_col = 200;
  size.ws_row = 40;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid == 0) {
    setenv("TERM", "xterm", 1);
    std::vector<char*> raw;
    for (const auto& word : argv) raw.push_back(const_cast<char*>(word.c_str()));
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  testing::ProgramOutcome outcome;
  if (pid < 0) return outcome;
  char buffer[4096];
  for (;;) {
    const ssize_t got = read(master, buffer, sizeof(buffer));
    if (got > 0) {
      outcome.out.append(buffer, static_cast<std::size_t>(got));
    } else if (got < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO: every process on the terminal has gone
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

// A store of five steps that an earlier run left where the job writes its own.
void writeEarlierStore(const std::string& path) {
  auto writer = store::Writer::open(path);
  ASSERT_TRUE(writer);
  for (std::int64_t index = 0; index < 5; ++index) {
    store::Step step;
    step.index = index;
    step.start_ns = index + 1;
    step.end_ns = index + 2;
    (*writer)->add(step);
  }
  ASSERT_TRUE((*writer)->close(10));
}

TEST(LiveStatus, RunShowsTheJobsProgressOnATerminalAndClearsIt) {
  testing::TempDir dir;
  writeEarlierStore(dir.file("live.db"));
  const auto outcome = runOnTerminal(liveJob(dir));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.out;
  const std::string& screen = outcome.out;
  // Rewritten in place: the line starts with \r and ends by erasing the rest of the row.
  EXPECT_THAT(screen, HasSubstr("\rtorchscope: 0s, "));
  EXPECT_THAT(screen, HasSubstr(", 3 steps, 1 compilation ("));
  EXPECT_THAT(screen, Not(HasSubstr("5 steps")));  // the earlier run's store is not the job's
  EXPECT_THAT(screen, HasSubstr(" (0.3 s)\x1b[K"));
  // The collector's summary at the job's exit takes the status line's place instead of following it.
  EXPECT_THAT(screen, HasSubstr("\r\x1b[Ktorchscope: 1 compile, "));
  // Cleared before torchscope's own last line, which stays whole.
  const auto written = screen.find("torchscope: store written to");
  ASSERT_NE(written, std::string::npos) << screen;
  EXPECT_EQ(screen.rfind("\r\x1b[K", written), written - 4) << screen;
  EXPECT_THAT(screen.substr(written), Not(HasSubstr("\r\x1b[K")));
}

// A torchrun job: the launcher's store has no steps; its ranks' stores beside it do.
TEST(LiveStatus, ALaunchersJobShowsItsRanksAndTheSlowestRanksSteps) {
  testing::TempDir dir;
  const std::string torchrun = (std::filesystem::path(TORCHSCOPE_PYTHON).parent_path() / "torchrun").string();
  if (!std::filesystem::exists(torchrun)) GTEST_SKIP() << "no torchrun beside " << TORCHSCOPE_PYTHON;
  setenv("COMPILE", "0", 1);
  setenv("STEPS", "30", 1);
  setenv("SLOW_RANK", "1", 1);
  setenv("SLOW_SECONDS", "0.1", 1);
  const auto outcome = runOnTerminal({testing::torchscopeExecutable().string(), "run", "-o", dir.file("ddp.db"), "--",
                                      torchrun, "--standalone", "--nproc-per-node", "2",
                                      testing::sourcePath("tests/compiler/scripts/ddp_job.py").string()});
  for (const char* name : {"COMPILE", "STEPS", "SLOW_RANK", "SLOW_SECONDS"}) unsetenv(name);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.out;
  EXPECT_THAT(outcome.out, HasSubstr(", 2 ranks, ")) << outcome.out;
  EXPECT_THAT(outcome.out, ::testing::ContainsRegex("2 ranks, [1-9][0-9]* steps? \\(the slowest rank's\\)"));
}

TEST(LiveStatus, RunIsQuietWhenStderrIsAPipe) {
  testing::TempDir dir;
  const auto outcome = testing::runProgram(liveJob(dir));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("torchscope: store written to"));
  EXPECT_THAT(outcome.err + outcome.out, Not(HasSubstr("\r")));
  EXPECT_THAT(outcome.err + outcome.out, Not(HasSubstr("\x1b[K")));
}

}  // namespace
}  // namespace torchscope
