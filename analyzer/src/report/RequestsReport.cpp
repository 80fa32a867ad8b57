// The requests' section of every report (docs/rules.md, *Requests*): latency percentiles and throughput of an
// inference job's steady-state requests.
#include <fmt/format.h>

#include "Reports.h"

namespace torchscope::analyzer::report {

namespace {

std::string ms(double seconds) { return fmt::format("{:.2f} ms", seconds * 1e3); }

// "334 requests/s, 5,350 items/s (16.0 items each)" over the busy time.
std::string throughput(const RequestSummary& requests) {
  std::string text = fmt::format("{:.1f} requests/s", requests.requests_per_s);
  if (requests.items >= 0 && requests.steady > 0) {
    text += fmt::format(", {:.0f} items/s ({:.1f} items each)", requests.items_per_s,
                        static_cast<double>(requests.items) / static_cast<double>(requests.steady));
  }
  return text;
}

// What the figures are of, and the wait between requests when it is more than a tenth of their span.
std::string span(const RequestSummary& requests) {
  // A job with too few requests keeps them all (base::steadyStepPositions): then nothing was left out.
  std::string text =
      requests.steady < requests.requests
          ? fmt::format("{} steady-state request(s) of {}, the warm-up left out", requests.steady, requests.requests)
          : fmt::format("all {} request(s), none left out as warm-up", requests.requests);
  text += fmt::format("; the rates are over the {:.2f} s the requests ran", requests.busy_s);
  if (requests.waitShare() > 0.1) {
    text += fmt::format(
        " ({:.0f} % of their {:.2f} s span went between requests: waiting for input or the job's own "
        "work around the calls, left out)",
        requests.waitShare() * 100, requests.span_s);
  }
  return text;
}

// "The transformer encoder's fast path ...": one sentence, "" when the probe saw no encoder layer.
std::string fastPath(const TransformerFastPath& fast_path) {
  if (fast_path.layer_calls == 0) return "";
  if (!fast_path.missed()) {
    return fmt::format(
        "The transformer encoder's fast path (fused kernel) was taken by all {} encoder layer calls of the first "
        "request",
        fast_path.layer_calls);
  }
  return fmt::format(
      "The transformer encoder's fast path (fused kernel) was taken by {} of {} encoder layer calls of the first "
      "request; torch's reason: \"{}\" (inference/transformer-fast-path)",
      fast_path.fast_path_calls, fast_path.layer_calls, fast_path.reason);
}

}  // namespace

nlohmann::json requestsJson(const RequestSummary& requests) {
  nlohmann::json out = {{"requests", requests.requests},
                        {"steady_requests", requests.steady},
                        {"latency_p50_seconds", requests.p50_s},
                        {"latency_p90_seconds", requests.p90_s},
                        {"latency_p99_seconds", requests.p99_s},
                        {"latency_max_seconds", requests.max_s},
                        {"busy_seconds", requests.busy_s},
                        {"span_seconds", requests.span_s},
                        {"requests_per_second", requests.requests_per_s}};
  if (requests.items >= 0) {
    out["items"] = requests.items;
    out["items_per_second"] = requests.items_per_s;
  }
  if (const TransformerFastPath& fast_path = requests.transformer; fast_path.layer_calls > 0) {
    out["transformer_fast_path"] = {
        {"layer_calls", fast_path.layer_calls},
        {"fast_path_calls", fast_path.fast_path_calls},
        {"reason", fast_path.reason.empty() ? nlohmann::json() : nlohmann::json(fast_path.reason)},
        {"layer_share", fast_path.layer_share}};
  }
  return out;
}

std::string requestsText(const RequestSummary& requests) {
  if (!requests.recorded) return "";
  if (requests.steady == 0)
    return fmt::format("  {} request(s), none of them in the steady state\n", requests.requests);
  const std::string fast_path = fastPath(requests.transformer);
  return fmt::format("  requests: latency p50 {}, p90 {}, p99 {}, max {}; {}\n  ({}; time by line is per request)\n{}",
                     ms(requests.p50_s), ms(requests.p90_s), ms(requests.p99_s), ms(requests.max_s),
                     throughput(requests), span(requests), fast_path.empty() ? "" : "  " + fast_path + "\n");
}

std::string requestsMarkdown(const RequestSummary& requests, const std::string& run) {
  if (!requests.recorded || requests.steady == 0) return "";
  std::string out = run.empty() ? "### Requests\n\n" : fmt::format("### Requests of {}\n\n", escapeMarkdown(run));
  out += "| p50 | p90 | p99 | max | throughput |\n|---|---|---|---|---|\n";
  out += fmt::format("| {} | {} | {} | {} | {} |\n\n", ms(requests.p50_s), ms(requests.p90_s), ms(requests.p99_s),
                     ms(requests.max_s), throughput(requests));
  out += escapeMarkdown(span(requests)) + "; time by line is per request.\n\n";
  if (const std::string fast_path = fastPath(requests.transformer); !fast_path.empty()) {
    out += escapeMarkdown(fast_path) + ".\n\n";
  }
  return out;
}

std::string requestsHtml(const RequestSummary& requests) {
  if (!requests.recorded || requests.steady == 0) return "";
  const std::string fast_path = fastPath(requests.transformer);
  return fmt::format(
      "<h3>Requests</h3>\n<table class=\"memory\"><tr><th>p50</th><th>p90</th><th>p99</th><th>max</th>"
      "<th>Throughput</th></tr>\n<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n</table>\n"
      "<p class=\"legend\">{}; time by line is per request.{}</p>\n",
      ms(requests.p50_s), ms(requests.p90_s), ms(requests.p99_s), ms(requests.max_s), escapeXml(throughput(requests)),
      escapeXml(span(requests)), fast_path.empty() ? "" : " " + escapeXml(fast_path) + ".");
}

}  // namespace torchscope::analyzer::report
