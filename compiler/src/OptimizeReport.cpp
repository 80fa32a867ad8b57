// The libtorch-free half of `optimize`: shape parsing and rendering.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "torchscope/compiler/Optimize.h"

namespace torchscope::compiler {

Result<std::vector<std::int64_t>> parseShape(const std::string& text) {
  std::vector<std::int64_t> shape;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(",x", begin), text.size());
    const std::string word = text.substr(begin, end - begin);
    if (word.empty() || word.find_first_not_of("0123456789") != std::string::npos || word.size() > 9) {
      return makeError(ErrorCode::kInvalidArgument, "bad input shape '" + text + "' (expected e.g. 1,3,224,224)");
    }
    shape.push_back(std::stoll(word));
    if (shape.back() == 0) return makeError(ErrorCode::kInvalidArgument, "bad input shape '" + text + "': zero size");
    begin = end + 1;
  }
  return shape;
}

nlohmann::json optimizeJson(const OptimizeReport& report) {
  const auto number = [](double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); };
  nlohmann::json out = {{"model", report.model}, {"inputs", report.inputs}, {"rounds", report.rounds},
                        {"iterations", report.iterations}, {"variants", nlohmann::json::array()}};
  for (const auto& v : report.variants) {
    nlohmann::json entry = {{"name", v.name}, {"available", v.available}, {"note", v.note}};
    if (v.available) {
      entry["latency_ms"] = {{"median", number(v.latency_median_ms)}, {"p10", number(v.latency_p10_ms)},
                             {"p90", number(v.latency_p90_ms)}};
      entry["speedup"] = {{"median", number(v.speedup.estimate)}, {"ci_low", number(v.speedup.ci_low)},
                          {"ci_high", number(v.speedup.ci_high)}};
      entry["parity"] = {{"ok", v.parity_ok}, {"max_abs_diff", number(v.max_abs_diff)},
                         {"max_rel_diff", number(v.max_rel_diff)}, {"tolerance", v.tolerance}};
    }
    out["variants"].push_back(entry);
  }
  return out;
}

std::string renderOptimizeText(const OptimizeReport& report) {
  std::string out = fmt::format("torchscope optimize: {} with input {}\n{} interleaved rounds x {} calls per variant\n\n",
                                report.model, report.inputs, report.rounds, report.iterations);
  out += fmt::format("{:<28} {:>12} {:>21} {:>26} {}\n", "variant", "median ms", "p10 - p90 ms", "speed-up (95 % CI)", "parity");
  for (const auto& v : report.variants) {
    if (!v.available) {
      out += fmt::format("{:<28} unavailable: {}\n", v.name, v.note);
      continue;
    }
    out += fmt::format("{:<28} {:>12.4f} {:>10.4f} - {:<8.4f} {:>8.3f}x [{:.3f}, {:.3f}] {} (max rel. diff {:.2g}, tol {:.0e})\n",
                       v.name, v.latency_median_ms, v.latency_p10_ms, v.latency_p90_ms, v.speedup.estimate,
                       v.speedup.ci_low, v.speedup.ci_high, v.parity_ok ? "ok" : "BROKEN", v.max_rel_diff, v.tolerance);
  }
  return out;
}

}  // namespace torchscope::compiler
