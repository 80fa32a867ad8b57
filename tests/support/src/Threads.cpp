#include "torchscope/testing/Threads.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace torchscope::testing {

std::int64_t wakeUpsOf(const std::string& name) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    if (!std::getline(comm, thread_name) || thread_name != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::atoll(line.c_str() + 24);
    }
  }
  return -1;
}

}  // namespace torchscope::testing
