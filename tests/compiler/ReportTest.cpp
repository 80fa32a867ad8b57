#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "torchscope/compiler/Report.h"

namespace torchscope::compiler {
namespace {

FixReport sampleReport() {
  FixReport report;
  report.command = "python <train>.py";
  report.repetitions = 3;
  report.baseline.step_time_median_s = 0.2;
  report.baseline.total_time_s = 10;
  report.baseline.recompiles = 7;
  report.baseline.runs = 2;
  report.baseline.metrics["end_to_end_cpu"] = {{60.0, 62.0}, 61.0, {}};
  report.verdict_metric = "end_to_end_cpu";
  report.runs = 5;
  FixOutcome fix;
  fix.id = "tensor-lr";
  fix.kind = "runtime";
  fix.status = "accepted";
  fix.measured = true;
  fix.accepted = true;
  fix.reason = "faster <steady> state";
  fix.speedup = {1.5, 1.4, 1.6};
  fix.verdict = {1.45, 1.3, 1.6, 0.975, 3};
  fix.effect = {true, true, 1, 0, "fewer Python-number recompiles: 1 -> 0"};
  fix.total_speedup = 1.3;
  fix.stats.recompiles = 0;
  fix.stats.runs = 2;
  fix.stats.metrics["end_to_end_cpu"] = {{42.0, 43.0}, 42.5, {1.435, 1.3, 1.58}};
  fix.parity.checked = true;
  fix.parity.max_rel_diff = 1e-7;
  fix.diff = "--- a/x.py\n+++ b/x.py\n";
  report.fixes.push_back(fix);
  FixOutcome advice;
  advice.id = "sdpa";
  advice.kind = "advice";
  advice.status = "advice";
  advice.reason = "no automatic fix";
  report.fixes.push_back(advice);
  report.combined = fix;
  report.combined->id = "combined";
  report.combined->members = {"tensor-lr"};
  return report;
}

TEST(Report, JsonFollowsTheContract) {
  const auto json = reportJson(sampleReport());
  for (const char* key : {"step_time_median_s", "total_time_s", "compile_time_s", "recompiles", "graph_breaks", "syncs"}) {
    EXPECT_TRUE(json["baseline"].contains(key)) << key;
  }
  EXPECT_TRUE(json["baseline"]["syncs"].is_null());
  ASSERT_EQ(json["fixes"].size(), 2U);
  for (const auto& fix : {json["fixes"][0], json["fixes"][1], json["combined"]}) {
    for (const char* key : {"id", "kind", "accepted", "reason", "speedup", "total_speedup", "recompiles_after",
                            "graph_breaks_after", "syncs_after", "parity", "diff"}) {
      EXPECT_TRUE(fix.contains(key)) << key;
    }
    for (const char* key : {"median", "ci_low", "ci_high"}) EXPECT_TRUE(fix["speedup"].contains(key)) << key;
    for (const char* key : {"ok", "max_rel_diff"}) EXPECT_TRUE(fix["parity"].contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(json["fixes"][0]["speedup"]["ci_low"].get<double>(), 1.4);
  // Added fields: the verdict and its measure, every metric, the effect, the sequential design.
  EXPECT_EQ(json["verdict_metric"], "end_to_end_cpu");
  EXPECT_EQ(json["fixes"][0]["status"], "accepted");
  EXPECT_EQ(json["fixes"][0]["runs"], 2);
  EXPECT_EQ(json["fixes"][0]["verdict"]["metric"], "end_to_end_cpu");
  EXPECT_DOUBLE_EQ(json["fixes"][0]["verdict"]["confidence"].get<double>(), 0.975);
  EXPECT_DOUBLE_EQ(json["fixes"][0]["metrics"]["end_to_end_cpu"]["speedup"]["median"].get<double>(), 1.435);
  EXPECT_EQ(json["fixes"][0]["metrics"]["end_to_end_cpu"]["runs_s"].size(), 2U);
  EXPECT_TRUE(json["fixes"][0]["effect"]["shown"].get<bool>());
  EXPECT_TRUE(json["fixes"][1]["effect"].is_null());
  EXPECT_EQ(json["fixes"][1]["status"], "advice");
  EXPECT_DOUBLE_EQ(json["baseline"]["metrics"]["end_to_end_cpu"]["median_s"].get<double>(), 61.0);
  EXPECT_TRUE(json["sequential"]["fixes"].contains("look_confidence"));
  EXPECT_EQ(json["fixes"][0]["recompiles_after"], 0);
  EXPECT_TRUE(json["fixes"][1]["speedup"]["median"].is_null());
  EXPECT_EQ(json["combined"]["members"][0], "tensor-lr");
  FixReport empty = sampleReport();
  empty.combined.reset();
  EXPECT_TRUE(reportJson(empty)["combined"].is_null());
}

TEST(Report, HtmlEscapesAndTextShowsVerdicts) {
  const auto report = sampleReport();
  const auto html = renderHtml(report);
  EXPECT_EQ(html.find("<train>"), std::string::npos);
  EXPECT_NE(html.find("&lt;train&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;steady&gt;"), std::string::npos);
  const auto text = renderText(report);
  EXPECT_NE(text.find("accepted"), std::string::npos);
  EXPECT_NE(text.find("end-to-end CPU time *"), std::string::npos) << text;  // the verdict's measure is marked
  EXPECT_NE(text.find("61.00 s"), std::string::npos) << text;
  EXPECT_NE(text.find("1.435x [1.300, 1.580]"), std::string::npos) << text;
  EXPECT_NE(text.find("recompiles 7 -> 0"), std::string::npos) << text;
  EXPECT_NE(renderMarkdown(report).find("| `tensor-lr` |"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::compiler
