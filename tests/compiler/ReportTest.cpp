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
  FixOutcome fix;
  fix.id = "tensor-lr";
  fix.kind = "runtime";
  fix.measured = true;
  fix.accepted = true;
  fix.reason = "faster <steady> state";
  fix.speedup = {1.5, 1.4, 1.6};
  fix.total_speedup = 1.3;
  fix.stats.recompiles = 0;
  fix.parity.checked = true;
  fix.parity.max_rel_diff = 1e-7;
  fix.diff = "--- a/x.py\n+++ b/x.py\n";
  report.fixes.push_back(fix);
  FixOutcome advice;
  advice.id = "sdpa";
  advice.kind = "advice";
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
  EXPECT_NE(text.find("1.500x [1.400, 1.600]"), std::string::npos);
  EXPECT_NE(text.find("recompiles 7 -> 0"), std::string::npos);
  EXPECT_NE(renderMarkdown(report).find("| `tensor-lr` |"), std::string::npos);
}

}  // namespace
}  // namespace torchscope::compiler
