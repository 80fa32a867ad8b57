#include "Window.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "Environment.h"
#include "Signals.h"
#include "torchscope/base/Clock.h"

namespace torchscope::collector {

namespace {

constexpr int kToggleSignal = SIGUSR2;

// A whole number of steps, >= 0; -1 when `text` is not one.
std::int64_t stepNumber(const std::string& text) {
  if (text.empty() || text.size() > 15 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(text);
}

// Seconds (a decimal number >= 0) as nanoseconds; -1 when `text` is not one.
std::int64_t secondsAsNanos(const std::string& text) {
  if (text.empty()) return -1;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 1e9) return -1;
  return static_cast<std::int64_t>(seconds * 1e9);
}

// The toggle signal's handler writes one byte here; the window's thread reads it (little is safe in a handler).
int toggle_pipe[2] = {-1, -1};
struct sigaction previous_toggle_action;
std::atomic<bool> toggle_installed{false};

void onToggleSignal(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const char byte = 1;
  ssize_t ignored = write(toggle_pipe[1], &byte, 1);
  (void)ignored;
  errno = saved_errno;
  // A handler the job set (before the collector, or after it through rechainToggleSignal) runs too. The default
  // action (death) is not taken: the job asked for the signal to toggle the window.
  const struct sigaction before = previous_toggle_action;
  if (!isHandlerFunction(before) || before.sa_sigaction == &onToggleSignal) return;
  if ((before.sa_flags & SA_SIGINFO) != 0) {
    before.sa_sigaction(signal_number, info, context);
  } else {
    before.sa_handler(signal_number);
  }
}

void installToggleHandler() {
  struct sigaction action {};
  action.sa_sigaction = &onToggleSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction before {};
  if (sigaction(kToggleSignal, &action, &before) != 0) return;
  if (before.sa_sigaction != &onToggleSignal) previous_toggle_action = before;
  toggle_installed.store(true);
}

}  // namespace

const char* windowModeName(WindowMode mode) {
  switch (mode) {
    case WindowMode::kSteps: return "steps";
    case WindowMode::kTime: return "time";
    case WindowMode::kCudaProfiler: return "cuda-profiler";
    case WindowMode::kSignal: return "signal";
    case WindowMode::kWhole: break;
  }
  return "whole";
}

WindowSettings windowSettingsFromEnvironment() {
  WindowSettings settings;
  const std::string steps = settingString(settings::kWindowSteps);
  const std::string delay = settingString(settings::kWindowDelayS);
  const std::string duration = settingString(settings::kWindowDurationS);
  const std::string range = settingString(settings::kWindowCaptureRange);
  const bool signal = settingOn(settings::kWindowSignal);
  const int modes = static_cast<int>(!steps.empty()) + static_cast<int>(!delay.empty() || !duration.empty()) +
                    static_cast<int>(!range.empty()) + static_cast<int>(signal);
  if (modes == 0) return settings;
  if (modes > 1) {
    settings.error = "more than one capture window was asked for (steps, delay/duration, capture range, signal)";
    return settings;
  }
  if (!steps.empty()) {
    const std::size_t colon = steps.find(':');
    const std::int64_t first = stepNumber(steps.substr(0, colon));
    const std::int64_t end =
        colon == std::string::npos || colon + 1 == steps.size() ? -1 : stepNumber(steps.substr(colon + 1));
    const bool open_ended = colon != std::string::npos && colon + 1 == steps.size();
    if (colon == std::string::npos || first < 0 || (!open_ended && end <= first)) {
      settings.error =
          std::string(settings::kWindowSteps.name) + "=" + steps + " is not A:B (whole steps, A < B) or A:";
      return settings;
    }
    settings.mode = WindowMode::kSteps;
    settings.first_step = first;
    settings.end_step = end;
  } else if (!delay.empty() || !duration.empty()) {
    settings.delay_ns = delay.empty() ? 0 : secondsAsNanos(delay);
    settings.duration_ns = duration.empty() ? -1 : secondsAsNanos(duration);
    if (settings.delay_ns < 0 || (!duration.empty() && settings.duration_ns <= 0)) {
      settings.error = std::string(settings::kWindowDelayS.name) + "=" + delay + " / " +
                       std::string(settings::kWindowDurationS.name) + "=" + duration +
                       " are not seconds (delay >= 0, duration > 0)";
      return settings;
    }
    settings.mode = WindowMode::kTime;
  } else if (!range.empty()) {
    if (range != "cuda-profiler") {
      settings.error = std::string(settings::kWindowCaptureRange.name) + "=" + range + " is not cuda-profiler";
      return settings;
    }
    settings.mode = WindowMode::kCudaProfiler;
  } else {
    settings.mode = WindowMode::kSignal;
  }
  return settings;
}

void CaptureWindow::begin(const WindowSettings& settings, std::int64_t start_ns, Listener listener) {
  {
    std::lock_guard lock(mutex_);
    settings_ = settings;
    listener_ = listener;
    intervals_.clear();
    steps_kept_ = 0;
    first_kept_ = -1;
    last_kept_ = -1;
    ended_ = false;
    const bool open_at_start = settings.mode == WindowMode::kWhole ||
                               (settings.mode == WindowMode::kSteps && settings.first_step == 0) ||
                               (settings.mode == WindowMode::kTime && settings.delay_ns == 0);
    open_.store(open_at_start);
    if (open_at_start) intervals_.emplace_back(start_ns, -1);
  }
  if (settings.mode == WindowMode::kSignal && pipe2(toggle_pipe, O_CLOEXEC) == 0) installToggleHandler();
  if (settings.mode == WindowMode::kTime || settings.mode == WindowMode::kSignal) {
    // The thread takes no signals: the job's handlers keep running on the job's own threads.
    sigset_t all;
    sigset_t previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    std::thread([this, start_ns] { runTimer(start_ns); }).detach();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
}

void CaptureWindow::runTimer(std::int64_t start_ns) {
  pthread_setname_np(pthread_self(), "torchscope-win");
  const int read_fd = settings_.mode == WindowMode::kSignal ? toggle_pipe[0] : -1;
  const std::int64_t opens_at = start_ns + settings_.delay_ns;
  const std::int64_t closes_at = settings_.duration_ns < 0 ? -1 : opens_at + settings_.duration_ns;
  for (;;) {
    std::int64_t wait_ms = -1;
    if (settings_.mode == WindowMode::kTime) {
      const std::int64_t now = base::monotonicNow();
      const bool before_open = !isOpen() && now < opens_at;
      if (!isOpen() && !before_open) {
        if (closes_at >= 0 && now >= closes_at) return;
        setOpen(true, now);
      }
      if (isOpen() && closes_at >= 0 && now >= closes_at) {
        setOpen(false, now);
        return;
      }
      const std::int64_t next = isOpen() ? closes_at : opens_at;
      if (next < 0) return;  // open to the end of the run
      wait_ms = (next - now) / 1000000 + 1;
    }
    pollfd readable{read_fd, POLLIN, 0};
    const int ready = poll(&readable, read_fd >= 0 ? 1 : 0, static_cast<int>(wait_ms));
    if (ready == 1) {
      char byte = 0;
      if (read(read_fd, &byte, 1) == 1) toggle(base::monotonicNow());
    } else if (ready < 0 && errno != EINTR) {
      return;
    }
    std::lock_guard lock(mutex_);
    if (ended_) return;
  }
}

bool CaptureWindow::admitStep(std::int64_t index, std::int64_t end_ns) {
  if (settings_.mode != WindowMode::kSteps) {
    if (!isOpen()) return false;
    std::lock_guard lock(mutex_);
    if (first_kept_ < 0) first_kept_ = index;
    last_kept_ = index;
    ++steps_kept_;
    return true;
  }
  const bool inside = index >= settings_.first_step && (settings_.end_step < 0 || index < settings_.end_step);
  if (inside) {
    std::lock_guard lock(mutex_);
    if (first_kept_ < 0) first_kept_ = index;
    last_kept_ = index;
    ++steps_kept_;
  }
  // The step before the window ends where the window's first step starts.
  if (index + 1 == settings_.first_step) setOpen(true, end_ns);
  if (settings_.end_step >= 0 && index + 1 == settings_.end_step) setOpen(false, end_ns);
  return inside;
}

void CaptureWindow::profilerRange(bool start, std::int64_t at_ns) {
  if (settings_.mode == WindowMode::kCudaProfiler) setOpen(start, at_ns);
}

void CaptureWindow::toggle(std::int64_t at_ns) {
  if (settings_.mode == WindowMode::kSignal) setOpen(!isOpen(), at_ns);
}

void CaptureWindow::setOpen(bool open, std::int64_t at_ns) {
  Listener listener = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (ended_ || open_.load() == open) return;
    if (open) {
      intervals_.emplace_back(at_ns, -1);
    } else if (!intervals_.empty()) {
      intervals_.back().second = at_ns;
    }
    open_.store(open);
    listener = listener_;
  }
  if (open) wakeWaiters();
  if (listener != nullptr) listener(open);
}

void CaptureWindow::waitWhileClosed(const std::atomic<bool>& stop) const {
  // Read before the checks: a change after them bumps the generation, and the wait then returns at once.
  std::uint32_t generation = wake_generation_.load();
  while (!isOpen() && !stop.load()) {
    wake_generation_.wait(generation);
    generation = wake_generation_.load();
  }
}

void CaptureWindow::wakeWaiters() const {
  wake_generation_.fetch_add(1);
  wake_generation_.notify_all();
}

void CaptureWindow::end(std::int64_t at_ns) {
  std::lock_guard lock(mutex_);
  if (ended_) return;
  if (open_.load() && !intervals_.empty() && intervals_.back().second < 0) intervals_.back().second = at_ns;
  ended_ = true;
}

std::optional<store::CaptureWindow> CaptureWindow::record() const {
  std::lock_guard lock(mutex_);
  if (settings_.mode == WindowMode::kWhole) return std::nullopt;
  store::CaptureWindow out;
  out.pid = ::getpid();
  out.mode = windowModeName(settings_.mode);
  if (settings_.mode == WindowMode::kSteps) {
    out.first_step = settings_.first_step;
    out.end_step = settings_.end_step;
  } else if (settings_.mode == WindowMode::kTime) {
    out.delay_s = static_cast<double>(settings_.delay_ns) / 1e9;
    out.duration_s = settings_.duration_ns < 0 ? -1.0 : static_cast<double>(settings_.duration_ns) / 1e9;
  } else if (settings_.mode == WindowMode::kSignal) {
    out.signal = "SIGUSR2";
  }
  nlohmann::json intervals = nlohmann::json::array();
  for (const auto& [opened, closed] : intervals_) {
    intervals.push_back({opened, closed});
    if (closed >= opened) out.open_s += static_cast<double>(closed - opened) / 1e9;
  }
  out.intervals = intervals.dump();
  out.steps = steps_kept_;
  out.first_kept_step = first_kept_;
  out.last_kept_step = last_kept_;
  return out;
}

void rechainToggleSignal() {
  if (!toggle_installed.load()) return;
  installToggleHandler();
}

}  // namespace torchscope::collector
