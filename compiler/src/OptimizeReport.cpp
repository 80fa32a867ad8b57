// The libtorch-free half of `optimize`: shape parsing, latency summaries, the recommendation and rendering.
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

namespace {

// The 95 % interval of a latency quantile from its per-round values: Student's t on their logs.
LatencyQuantile quantileOverRounds(const std::vector<std::vector<double>>& rounds, double q) {
  std::vector<double> pooled;
  std::vector<double> logs;
  for (const auto& samples : rounds) {
    pooled.insert(pooled.end(), samples.begin(), samples.end());
    logs.push_back(std::log(std::max(quantile(samples, q), 1e-9)));
  }
  LatencyQuantile result{quantile(pooled, q), NAN, NAN};
  if (logs.size() < 2) return result;
  double mean = 0;
  for (const double value : logs) mean += value / static_cast<double>(logs.size());
  double variance = 0;
  for (const double value : logs) variance += (value - mean) * (value - mean) / static_cast<double>(logs.size() - 1);
  const double half = studentTQuantile(0.975, static_cast<double>(logs.size() - 1)) *
                      std::sqrt(variance / static_cast<double>(logs.size()));
  result.ci_low_ms = std::exp(mean - half);
  result.ci_high_ms = std::exp(mean + half);
  return result;
}

std::string interval(const LatencyQuantile& q) {
  if (!std::isfinite(q.ci_low_ms)) return fmt::format("{:.4f}", q.value_ms);
  return fmt::format("{:.4f} [{:.4f}, {:.4f}]", q.value_ms, q.ci_low_ms, q.ci_high_ms);
}

std::string renderProgramText(const OptimizeReport& report) {
  std::string out = fmt::format(
      "torchscope optimize: {} ({}) with input {}\n{} interleaved rounds x {} calls per variant, {} threads; "
      "p50/p99 per call in ms with 95 % intervals over rounds\n\n",
      report.model, report.kind == "aoti_package" ? "AOTInductor package" : "exported program", report.inputs,
      report.rounds, report.iterations, report.threads);
  if (!report.variants.empty() && report.variants.front().name != "package as given") {
    out += fmt::format("speed-ups against {}: {}\n\n", report.variants.front().name, report.variants.front().note);
  }
  out += fmt::format("{:<26} {:>28} {:>28} {:>24} {:>22} {:>10} {:>9}\n", "variant", "p50 ms", "p99 ms",
                     "speed-up (95 % CI)", "parity (max rel diff)", "compile s", "package");
  for (const auto& v : report.variants) {
    if (!v.available) {
      out += fmt::format("{:<26} failed: {}\n", v.name, v.note);
      continue;
    }
    std::string parity = fmt::format("{} ({:.2g})", v.parity_ok ? "ok" : "BROKEN", v.max_rel_diff);
    if (v.top1_agreement >= 0) parity += fmt::format(" top-1 {:.0f} %", 100 * v.top1_agreement);
    const std::string compile = v.compile_s < 0 ? "-" : v.cached ? "cached" : fmt::format("{:.1f}", v.compile_s);
    const std::string size = v.package_bytes < 0 ? "-" : fmt::format("{:.1f} MB", v.package_bytes / 1e6);
    out += fmt::format("{:<26} {:>28} {:>28} {:>7.3f}x [{:.3f}, {:.3f}] {:>22} {:>10} {:>9}\n", v.name, interval(v.p50),
                       interval(v.p99), v.speedup.estimate, v.speedup.ci_low, v.speedup.ci_high, parity, compile, size);
  }
  out += "\n";
  for (const auto& v : report.variants) {
    if (v.available && !v.package.empty()) out += fmt::format("{:<26} {}\n", v.name, v.package);
  }
  out += fmt::format("\nrecommendation: {} ({})\n", report.recommendation, report.recommendation_reason);
  return out;
}

}  // namespace

void summarizeLatencies(const std::vector<std::vector<double>>& rounds, OptimizeVariant& variant) {
  std::vector<double> pooled;
  for (const auto& samples : rounds) pooled.insert(pooled.end(), samples.begin(), samples.end());
  variant.latency_median_ms = median(pooled);
  variant.latency_p10_ms = quantile(pooled, 0.1);
  variant.latency_p90_ms = quantile(pooled, 0.9);
  variant.p50 = quantileOverRounds(rounds, 0.5);
  variant.p99 = quantileOverRounds(rounds, 0.99);
}

namespace {
bool overlap(const LatencyQuantile& a, const LatencyQuantile& b) {
  return a.ci_low_ms <= b.ci_high_ms && b.ci_low_ms <= a.ci_high_ms;
}

std::string p50Text(const OptimizeVariant& v) {
  return fmt::format("{:.3g} ms [{:.3g}, {:.3g}]", v.p50.value_ms, v.p50.ci_low_ms, v.p50.ci_high_ms);
}
}  // namespace

void recommend(OptimizeReport& report) {
  if (!report.variants.empty() && !report.variants.front().parity_ok) {
    // The job's module answers two calls on the same inputs differently: nothing can be judged by its outputs.
    report.recommendation = "none";
    report.recommendation_reason = fmt::format(
        "{} answers the same inputs differently from one call to the next (max rel. diff {:.2g}): its forward keeps "
        "state or draws random numbers, which an exported program fixes at export time, so no variant's outputs can "
        "be checked against it; make forward a function of its inputs (eval() for dropout) and measure again",
        report.variants.front().name, report.variants.front().max_rel_diff);
    return;
  }
  const auto within = [](const OptimizeVariant& v) { return v.available && v.parity_ok && v.p50.value_ms > 0; };
  const OptimizeVariant* fastest = nullptr;
  for (const auto& v : report.variants) {
    if (within(v) && (fastest == nullptr || v.p50.value_ms < fastest->p50.value_ms)) fastest = &v;
  }
  if (fastest == nullptr) {
    report.recommendation = "none";
    report.recommendation_reason = "no variant ran within its parity tolerance";
    return;
  }
  const OptimizeVariant& baseline = report.variants.front();
  if (fastest == &baseline) {
    report.recommendation = fastest->name;
    report.recommendation_reason = "no variant within tolerance is faster than " + fastest->name;
    return;
  }
  // Variants whose p50 intervals overlap the fastest's are not told apart by this measurement: the one closest to
  // the eager outputs is as good a choice by speed and a better one by its answers (aoti over bf16, say).
  const OptimizeVariant* best = fastest;
  for (const auto& v : report.variants) {
    if (&v == &baseline || !within(v) || !overlap(v.p50, fastest->p50)) continue;
    if (v.max_rel_diff < best->max_rel_diff) best = &v;
  }
  report.recommendation = best->name;
  const std::string speedup = fmt::format("{:.2f}x [{:.2f}, {:.2f}] over {}", best->speedup.estimate,
                                          best->speedup.ci_low, best->speedup.ci_high, baseline.name);
  std::string reason = best == fastest ? "the fastest within tolerance: " + speedup
                                       : fmt::format(
                                             "as fast as {} within the intervals (p50 {} against {}) and "
                                             "closer to the eager outputs (max rel. diff {:.2g} against "
                                             "{:.2g}): {}",
                                             fastest->name, p50Text(*best), p50Text(*fastest), best->max_rel_diff,
                                             fastest->max_rel_diff, speedup);
  if (best->speedup.ci_low <= 1) reason += ", within the noise: measure with more --rounds";
  report.recommendation_reason = std::move(reason);
}

nlohmann::json optimizeJson(const OptimizeReport& report) {
  const auto number = [](double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); };
  nlohmann::json out = {{"model", report.model},           {"kind", report.kind},
                        {"inputs", report.inputs},         {"rounds", report.rounds},
                        {"iterations", report.iterations}, {"variants", nlohmann::json::array()}};
  const bool program = report.kind != "torchscript";
  if (program) {
    out["threads"] = report.threads;
    out["baseline"] = report.variants.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.variants.front().name);
    out["recommendation"] = {{"variant", report.recommendation}, {"reason", report.recommendation_reason}};
  }
  const auto latency = [&number](const LatencyQuantile& q) {
    return nlohmann::json{
        {"value", number(q.value_ms)}, {"ci_low", number(q.ci_low_ms)}, {"ci_high", number(q.ci_high_ms)}};
  };
  for (const auto& v : report.variants) {
    nlohmann::json entry = {{"name", v.name}, {"available", v.available}, {"note", v.note}};
    if (v.available) {
      entry["latency_ms"] = {{"median", number(v.latency_median_ms)}, {"p10", number(v.latency_p10_ms)},
                             {"p90", number(v.latency_p90_ms)}};
      entry["speedup"] = {{"median", number(v.speedup.estimate)}, {"ci_low", number(v.speedup.ci_low)},
                          {"ci_high", number(v.speedup.ci_high)}};
      entry["parity"] = {{"ok", v.parity_ok}, {"max_abs_diff", number(v.max_abs_diff)},
                         {"max_rel_diff", number(v.max_rel_diff)}, {"tolerance", v.tolerance}};
      if (program) {
        entry["latency_ms"]["p50"] = latency(v.p50);
        entry["latency_ms"]["p99"] = latency(v.p99);
        if (v.top1_agreement >= 0) entry["parity"]["top1_agreement"] = v.top1_agreement;
      }
    }
    if (program) {
      entry["compile_s"] = v.compile_s < 0 ? nlohmann::json(nullptr) : nlohmann::json(v.compile_s);
      entry["cached"] = v.cached;
      entry["package"] = v.package.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.package);
      entry["package_bytes"] = v.package_bytes < 0 ? nlohmann::json(nullptr) : nlohmann::json(v.package_bytes);
    }
    out["variants"].push_back(entry);
  }
  return out;
}

std::string renderOptimizeText(const OptimizeReport& report) {
  if (report.kind != "torchscript") return renderProgramText(report);
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
