#include "torchscope/analyzer/CaptureWindow.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "torchscope/base/JsonText.h"
#include "torchscope/store/CaptureWindow.h"

namespace torchscope::analyzer {

namespace {

std::string formatSpan(double seconds) {
  return seconds >= 1 ? fmt::format("{:.2f} s", seconds) : fmt::format("{:.1f} ms", seconds * 1e3);
}

// How the window was asked for, as the user gave it to `torchscope run`.
std::string bounds(const nlohmann::json& in, const std::string& mode) {
  if (mode == "steps") {
    const std::int64_t end = in.value("end_step", std::int64_t{-1});
    return fmt::format("--steps {}:{}", in.value("first_step", std::int64_t{0}), end >= 0 ? std::to_string(end) : "");
  }
  if (mode == "time") {
    const double duration = in.value("duration_s", -1.0);
    return fmt::format("--delay {:g}{}", in.value("delay_s", 0.0),
                       duration > 0 ? fmt::format(" --duration {:g}", duration) : std::string());
  }
  if (mode == "cuda-profiler") return "--capture-range cuda-profiler";
  return "--signal-toggle";
}

}  // namespace

CaptureWindow parseCaptureWindow(const std::string& attribute) {
  CaptureWindow window;
  const nlohmann::json in = base::parseJson(attribute);
  if (!in.is_object() || !in.contains("mode") || !in["mode"].is_string()) return window;
  try {
    window.mode = in["mode"].get<std::string>();
    window.attribute = attribute;
    window.open_seconds = in.value("open_s", 0.0);
    window.steps = in.value("steps", std::int64_t{0});
    window.first_kept_step = in.value("first_kept_step", std::int64_t{-1});
    window.last_kept_step = in.value("last_kept_step", std::int64_t{-1});
  } catch (const nlohmann::json::exception&) {
    return CaptureWindow{};
  }
  return window;
}

CaptureWindow captureWindowOf(const store::Reader& reader) {
  auto attributes = reader.load<store::RunAttribute>();
  if (!attributes) return {};
  for (const auto& attribute : *attributes) {
    if (attribute.key == store::kWindowAttribute) return parseCaptureWindow(attribute.value);
  }
  return {};
}

std::string CaptureWindow::describe() const {
  if (whole()) return "";
  const nlohmann::json in = base::parseJson(attribute);
  std::string kept =
      steps > 0 ? fmt::format("steps {}-{}, {} step{}", first_kept_step, last_kept_step, steps, steps == 1 ? "" : "s")
                : std::string("no step");
  const std::size_t intervals =
      in.is_object() && in.contains("intervals") && in["intervals"].is_array() ? in["intervals"].size() : 0;
  std::string opened = intervals == 0 ? "never opened" : formatSpan(open_seconds) + " open";
  if (intervals > 1) opened += fmt::format(" in {} intervals", intervals);
  return fmt::format("window {} ({}, {}); compilations, graph breaks and recompiles: the whole run", bounds(in, mode),
                     kept, opened);
}

}  // namespace torchscope::analyzer
