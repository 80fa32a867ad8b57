#include "torchscope/analyzer/CaptureWindow.h"

#include <fmt/format.h>

namespace torchscope::analyzer {

namespace {

std::string formatSpan(double seconds) {
  return seconds >= 1 ? fmt::format("{:.2f} s", seconds) : fmt::format("{:.1f} ms", seconds * 1e3);
}

// How the window was asked for, as the user gave it to `torchscope run`.
std::string bounds(const CaptureWindow& window) {
  if (window.mode == "steps") {
    return fmt::format("--steps {}:{}", window.first_step, window.end_step >= 0 ? std::to_string(window.end_step) : "");
  }
  if (window.mode == "time") {
    return fmt::format("--delay {:g}{}", window.delay_s,
                       window.duration_s > 0 ? fmt::format(" --duration {:g}", window.duration_s) : std::string());
  }
  if (window.mode == "cuda-profiler") return "--capture-range cuda-profiler";
  return "--signal-toggle";
}

}  // namespace

CaptureWindow captureWindowFrom(const store::CaptureWindow& row) {
  CaptureWindow window;
  window.mode = row.mode;
  window.first_step = row.first_step;
  window.end_step = row.end_step;
  window.delay_s = row.delay_s;
  window.duration_s = row.duration_s;
  window.signal = row.signal;
  window.intervals = row.openIntervals();
  window.open_seconds = row.open_s;
  window.steps = row.steps;
  window.first_kept_step = row.first_kept_step;
  window.last_kept_step = row.last_kept_step;
  return window;
}

CaptureWindow captureWindowOf(const store::Reader& reader) {
  auto rows = reader.load<store::CaptureWindow>();
  if (!rows || rows->empty()) return {};
  return captureWindowFrom(rows->front());
}

nlohmann::json windowJson(const CaptureWindow& window) {
  nlohmann::json out = {{"mode", window.mode}};
  if (window.mode == "steps") {
    out["first_step"] = window.first_step;
    out["end_step"] = window.end_step;
  } else if (window.mode == "time") {
    out["delay_s"] = window.delay_s;
    out["duration_s"] = window.duration_s;
  } else if (window.mode == "signal") {
    out["signal"] = window.signal;
  }
  nlohmann::json intervals = nlohmann::json::array();
  for (const auto& [opened, closed] : window.intervals) intervals.push_back({opened, closed});
  out["intervals"] = std::move(intervals);
  out["open_s"] = window.open_seconds;
  out["steps"] = window.steps;
  out["first_kept_step"] = window.first_kept_step;
  out["last_kept_step"] = window.last_kept_step;
  return out;
}

std::string CaptureWindow::describe() const {
  if (whole()) return "";
  std::string kept =
      steps > 0 ? fmt::format("steps {}-{}, {} step{}", first_kept_step, last_kept_step, steps, steps == 1 ? "" : "s")
                : std::string("no step");
  std::string opened = intervals.empty() ? "never opened" : formatSpan(open_seconds) + " open";
  if (intervals.size() > 1) opened += fmt::format(" in {} intervals", intervals.size());
  return fmt::format("window {} ({}, {}); compilations, graph breaks and recompiles: the whole run", bounds(*this),
                     kept, opened);
}

}  // namespace torchscope::analyzer
