// Fetches detail windows (DetailSource::fetch) on a thread of its own, so that zooming into a
// summarised store never blocks painting: the newest request wins, older ones are dropped, and the
// result is handed to `deliver` on the fetching thread (the view queues it to the GUI thread).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "torchscope/gui/DetailSource.h"

namespace torchscope::gui {

class WindowFetcher {
 public:
  using Deliver = std::function<void(std::shared_ptr<const DetailWindow>)>;

  WindowFetcher(std::shared_ptr<const Timeline> timeline, Deliver deliver);
  ~WindowFetcher();
  WindowFetcher(const WindowFetcher&) = delete;
  WindowFetcher& operator=(const WindowFetcher&) = delete;

  void request(Nanos begin_ns, Nanos end_ns);

 private:
  void run(std::shared_ptr<const Timeline> timeline);

  Deliver deliver_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<std::pair<Nanos, Nanos>> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace torchscope::gui
