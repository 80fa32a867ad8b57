// A status line on the terminal while jobs run under `run`, `demo` and `fix`: for each job its elapsed time, steps so
// far, and compilations so far with the time they took, read from the store its collector is writing (and, for a
// launcher such as torchrun, its ranks' stores beside it: the slowest rank's steps) (docs/FORMAT.md:
// committed every 100 ms in WAL mode). It is rewritten in place twice a second and cleared at the end; like git's
// progress, only when stderr is a terminal. The stores are opened read-only for each look and closed right after, so
// the job's writer never waits on them and the store closes as it would without it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace torchscope::cli {

class LiveStatus {
 public:
  // stderr is a terminal that understands "erase to the end of the line" (TERM is not "dumb").
  [[nodiscard]] static bool onTerminal();

  // `prefix` starts the line ("torchscope"); a status that is not `shown` draws nothing and print() only prints.
  LiveStatus(std::string prefix, bool shown);
  ~LiveStatus();  // clears the line
  LiveStatus(const LiveStatus&) = delete;
  LiveStatus& operator=(const LiveStatus&) = delete;

  // A job to show from now on, under `label` ("" for a single job), with its store ("" when it writes none), started
  // at `started`: a store that an earlier run left at that path is not the job's.
  void watch(const std::string& label, const std::string& store_path,
             std::chrono::system_clock::time_point started = std::chrono::system_clock::now());
  void forget(const std::string& label);
  // A whole line of output (to stdout or stderr, both the terminal): the status line makes room for it.
  void print(std::ostream& out, const std::string& line);

 private:
  struct Job {
    std::string label;
    std::string store_path;
    std::chrono::system_clock::time_point started;
    std::string so_far;  // what its store said at the last look
  };
  void loop();
  void lookAtStores();
  void draw();   // needs mutex_
  void clear();  // needs mutex_

  std::string prefix_;
  bool shown_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool on_screen_ = false;
  std::vector<Job> jobs_;
  std::thread thread_;
};

}  // namespace torchscope::cli
