#include "WindowFetcher.h"

namespace torchscope::gui {

WindowFetcher::WindowFetcher(std::shared_ptr<const Timeline> timeline, Deliver deliver)
    : deliver_(std::move(deliver)), thread_([this, timeline = std::move(timeline)]() mutable { run(std::move(timeline)); }) {}

WindowFetcher::~WindowFetcher() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void WindowFetcher::request(Nanos begin_ns, Nanos end_ns) {
  {
    const std::lock_guard lock(mutex_);
    pending_ = std::make_pair(begin_ns, end_ns);
  }
  wake_.notify_one();
}

void WindowFetcher::run(std::shared_ptr<const Timeline> timeline) {
  // The source's readers belong to this thread.
  auto source = DetailSource::open(std::move(timeline));
  for (;;) {
    std::pair<Nanos, Nanos> range;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || pending_.has_value(); });
      if (stopping_) return;
      range = *pending_;
      pending_.reset();
    }
    if (!source) continue;  // the store vanished since loading: the view keeps drawing summaries
    auto window = (*source)->fetch(range.first, range.second);
    if (window) deliver_(std::make_shared<const DetailWindow>(std::move(window).value()));
  }
}

}  // namespace torchscope::gui
