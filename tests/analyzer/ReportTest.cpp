// Report formats: structure (SARIF 2.1.0, JUnit as CI servers parse it, the JSON contract) and escaping of
// hostile strings from the store.
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

constexpr const char* kHostileKernel = "ampere_sgemm_</pre><script>alert(\"k\")</script>&amp;'\x01";
constexpr const char* kHostileFile = "/tmp/<evil> \"dir\"/x&y ]]> `|*.py";

// A store whose kernel names and paths try to break every format.
std::string hostileStore(const TempDir& dir) {
  const std::int64_t s = 1'000'000'000;
  const std::int64_t ms = 1'000'000;
  nlohmann::json fixture = {
      {"run", {{"command_line", "python <b>x</b>.py"}, {"start_ns", s}, {"end_ns", 2 * s}}},
      {"devices", {{{"device", 0}, {"name", "GPU"}, {"compute_major", 8}}}},
      {"steps", {{{"repeat", 10}, {"stride_ns", 100 * ms}, {"increment", {"index"}},
                  {"row", {{"index", 0}, {"start_ns", s}, {"end_ns", s + 100 * ms}}}}}},
      {"kernels", {{{"repeat", 10}, {"stride_ns", 100 * ms},
                    {"row", {{"name", kHostileKernel}, {"start_ns", s}, {"end_ns", s + 100 * ms}}}}}},
      {"syncs", {{{"repeat", 10}, {"stride_ns", 100 * ms},
                  {"row", {{"start_ns", s}, {"end_ns", s + 20 * ms}, {"sync_kind", "stream"}, {"op", "aten::item"},
                           {"file", kHostileFile}, {"line", 7}, {"function", "<lambda>"}}}}}},
  };
  const std::string store = dir.file("hostile.db");
  EXPECT_EQ(buildStore(fixture, store), "");
  return store;
}

Analysis hostileAnalysis(const TempDir& dir) {
  AnalyzeOptions options;
  options.timeline_buckets = 50;
  auto analysis = analyze({hostileStore(dir)}, options);
  EXPECT_TRUE(analysis.ok());
  EXPECT_GE(analysis->findings.size(), 2u);  // precision/fp32-matmul and sync/item
  return *analysis;
}

// The project's Python on `script` with `arguments`: its output, or its exit code and output when it failed.
std::string runPython(const std::string& script, const std::string& arguments) {
  const auto outcome = torchscope::testing::runPython("-c '" + script + "' " + arguments);
  return outcome.exit_code == 0 ? outcome.out : "exit " + std::to_string(outcome.exit_code) + ": " + outcome.out;
}

TEST(Html, EscapesEveryStringAndIsSelfContained) {
  TempDir dir;
  const std::string html = render(hostileAnalysis(dir), Format::kHtml);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<b>x</b>"), std::string::npos);
  EXPECT_EQ(html.find("<evil>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&lt;evil&gt;"), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"step times\""), std::string::npos);
  EXPECT_NE(html.find("aria-label=\"timeline overview\""), std::string::npos);
  EXPECT_EQ(html.find('\x01'), std::string::npos);
  // Every tag that opens a pre block closes it exactly once: the kernel name cannot end it early.
  std::size_t opened = 0;
  std::size_t closed = 0;
  for (std::size_t at = 0; (at = html.find("<pre>", at)) != std::string::npos; ++at) ++opened;
  for (std::size_t at = 0; (at = html.find("</pre>", at)) != std::string::npos; ++at) ++closed;
  EXPECT_EQ(opened, closed);
}

TEST(Markdown, EscapesHtmlAndTableSyntax) {
  TempDir dir;
  const std::string markdown = render(hostileAnalysis(dir), Format::kMarkdown);
  EXPECT_EQ(markdown.find("<script"), std::string::npos);
  EXPECT_EQ(markdown.find("<evil>"), std::string::npos);
  for (std::size_t start = 0, end; (end = markdown.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = markdown.substr(start, end - start);
    if (line.rfind("| ", 0) != 0 || line.rfind("| #", 0) == 0) continue;
    std::size_t pipes = 0;
    for (std::size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
    EXPECT_EQ(pipes, 8u) << line;  // 7 columns, whatever the cells contain
  }
}

// The memory summary of the two memory fixtures: a host leak of 1 MiB per step, a GPU near its capacity.
TEST(MemorySection, MarkdownAndHtmlListPeakLastStepAndGrowthPerSeries) {
  TempDir dir;
  auto leak = analyze({fixtureStore(dir, "memory_leak")});
  auto gpu = analyze({fixtureStore(dir, "memory_gpu_pressure")});
  auto clean = analyze({fixtureStore(dir, "clean")});
  ASSERT_TRUE(leak.ok() && gpu.ok() && clean.ok());

  const std::string host_row = "| host RSS | 534.1 MiB | 521.0 MiB | +1.0 MiB |";
  const std::string leak_markdown = render(*leak, Format::kMarkdown);
  EXPECT_NE(leak_markdown.find("### Memory\n\n| Memory | Peak | At the last step end | Growth per step |\n"),
            std::string::npos)
      << leak_markdown;
  EXPECT_NE(leak_markdown.find(host_row), std::string::npos) << leak_markdown;
  EXPECT_EQ(leak_markdown.find("GPU"), std::string::npos);
  // The section comes before the findings, which show memory findings like the others.
  EXPECT_LT(leak_markdown.find("### Memory"), leak_markdown.find("| # |"));
  EXPECT_NE(leak_markdown.find("`memory/growth`"), std::string::npos);

  const std::string gpu_markdown = render(*gpu, Format::kMarkdown);
  EXPECT_NE(gpu_markdown.find("| GPU 0 allocated | 12.0 GiB | 4.0 GiB | none |"), std::string::npos) << gpu_markdown;
  EXPECT_NE(gpu_markdown.find("| GPU 0 reserved | 15.0 GiB | 15.0 GiB | - |"), std::string::npos) << gpu_markdown;
  EXPECT_EQ(gpu_markdown.find("host RSS"), std::string::npos);
  EXPECT_NE(gpu_markdown.find("`memory/peak-near-capacity`"), std::string::npos);

  const std::string leak_html = render(*leak, Format::kHtml);
  EXPECT_NE(leak_html.find("<h3>Memory</h3>"), std::string::npos);
  EXPECT_NE(leak_html.find("<tr><td>host RSS</td><td>534.1 MiB</td><td>521.0 MiB</td><td>+1.0 MiB</td></tr>"),
            std::string::npos)
      << leak_html;
  EXPECT_LT(leak_html.find("<h3>Memory</h3>"), leak_html.find("<h2>Findings"));
  EXPECT_NE(render(*gpu, Format::kHtml).find("<tr><td>GPU 0 reserved</td><td>15.0 GiB</td><td>15.0 GiB</td><td>-</td></tr>"),
            std::string::npos);

  // JSON and text carry the same figures; a store without memory has no section.
  const auto json = nlohmann::json::parse(render(*gpu, Format::kJson))["runs"][0]["memory"];
  EXPECT_EQ(json["devices"][0]["last_step_allocated_bytes"], std::int64_t{4} << 30);
  EXPECT_EQ(json["devices"][0]["last_step_reserved_bytes"], std::int64_t{15} << 30);
  EXPECT_EQ(json["devices"][0]["allocated_growth_bytes_per_step"], 0.0);
  const auto leak_json = nlohmann::json::parse(render(*leak, Format::kJson))["runs"][0]["memory"];
  EXPECT_EQ(leak_json["peak_rss_step"], 9);
  EXPECT_NE(render(*leak, Format::kText).find("peak RSS 534.1 MiB (+1.0 MiB per step)"), std::string::npos);
  EXPECT_EQ(render(*clean, Format::kMarkdown).find("### Memory"), std::string::npos);
  EXPECT_EQ(render(*clean, Format::kHtml).find("<h3>Memory</h3>"), std::string::npos);
}

// An inference job's request section says what its figures leave out: the first request as warm-up, or nothing in
// a run too short to spare one (3 steps at least, as for training).
TEST(RequestsSection, SaysWhetherTheWarmUpWasLeftOut) {
  TempDir dir;
  auto requestStore = [&](int requests) {
    const std::int64_t s = 1'000'000'000;
    const std::int64_t ms = 1'000'000;
    nlohmann::json fixture = {
        {"run", {{"command_line", "python score.py"}, {"start_ns", s}, {"end_ns", 2 * s}}},
        {"steps",
         {{{"repeat", requests},
           {"stride_ns", 10 * ms},
           {"increment", {"index"}},
           {"row", {{"index", 0}, {"start_ns", s}, {"end_ns", s + 4 * ms}, {"source", "request"}}}}}},
    };
    const std::string store = dir.file("requests_" + std::to_string(requests) + ".db");
    EXPECT_EQ(buildStore(fixture, store), "");
    return store;
  };
  auto two = analyze({requestStore(2)});
  auto ten = analyze({requestStore(10)});
  ASSERT_TRUE(two.ok() && ten.ok());
  const std::string short_run = render(*two, Format::kText);
  EXPECT_NE(short_run.find("all 2 request(s), none left out as warm-up; the rates are over the 0.01 s"),
            std::string::npos)
      << short_run;
  EXPECT_EQ(short_run.find("steady-state request(s)"), std::string::npos);
  const std::string longer_run = render(*ten, Format::kText);
  EXPECT_NE(longer_run.find("9 steady-state request(s) of 10, the warm-up left out"), std::string::npos) << longer_run;
}

TEST(Json, FollowsTheDocumentedContract) {
  TempDir dir;
  const auto document = nlohmann::json::parse(render(hostileAnalysis(dir), Format::kJson));
  EXPECT_EQ(document["schema"], kJsonSchema);
  ASSERT_TRUE(document["findings"].is_array());
  ASSERT_TRUE(document["runs"].is_array());
  ASSERT_TRUE(document["notes"].is_array());
  for (const auto& finding : document["findings"]) {
    EXPECT_TRUE(finding["rule"].is_string());
    EXPECT_TRUE(finding["severity"] == "error" || finding["severity"] == "warning" || finding["severity"] == "info");
    EXPECT_TRUE(finding["title"].is_string());
    EXPECT_TRUE(finding["message"].is_string());
    EXPECT_TRUE(finding["location"]["file"].is_string());
    EXPECT_TRUE(finding["location"]["line"].is_number_integer() || finding["location"]["line"].is_null());
    EXPECT_TRUE(finding["location"]["function"].is_string());
    EXPECT_TRUE(finding["count"].is_number_integer());
    EXPECT_TRUE(finding["impact"]["seconds"].is_number());
    EXPECT_TRUE(finding["impact"]["fraction"].is_number());
    EXPECT_LE(finding["impact"]["fraction"].get<double>(), 1.0);
    EXPECT_TRUE(finding["evidence"].is_object());
    EXPECT_TRUE(finding["fix"]["id"].is_string());
    EXPECT_TRUE(finding["fix"]["summary"].is_string());
    EXPECT_TRUE(finding["fix"]["kind"] == "runtime" || finding["fix"]["kind"] == "source" || finding["fix"]["kind"] == "");
  }
}

// Text that is not UTF-8 in a store (a kernel name, a graph break's explanation) is replaced in the
// JSON and SARIF reports instead of making the JSON library throw: the store_reader_fuzz seed
// that found it, a valid store with such text.
TEST(Json, TextThatIsNotUtf8IsReplacedNotThrown) {
  TempDir dir;
  const std::string store = dir.file("huge-strings.db");
  std::filesystem::copy_file(sourcePath("analyzer/fuzz/corpus/huge-strings.db"), store);
  auto analysis = analyze({store});
  ASSERT_TRUE(analysis.ok()) << analysis.error().message;
  const std::string json = render(*analysis, Format::kJson);
  EXPECT_FALSE(nlohmann::json::parse(json, nullptr, false).is_discarded());
  EXPECT_NE(json.find("\xEF\xBF\xBD"), std::string::npos);  // U+FFFD where the bytes were
  EXPECT_FALSE(nlohmann::json::parse(render(*analysis, Format::kSarif), nullptr, false).is_discarded());
}

// Validates the report against the schema written in docs/rules.md (python jsonschema, from requirements.txt).
TEST(Json, ValidatesAgainstTheSchemaInRulesDoc) {
  TempDir dir;
  std::stringstream doc;
  doc << std::ifstream(sourcePath("docs/rules.md")).rdbuf();
  const std::string text = doc.str();
  const auto heading = text.find("### JSON schema");
  ASSERT_NE(heading, std::string::npos);
  const auto begin = text.find("```json\n", heading);
  const auto end = text.find("```", begin + 8);
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos);
  const std::string schema_path = dir.file("schema.json");
  std::ofstream(schema_path) << text.substr(begin + 8, end - begin - 8);
  const std::string report_path = dir.file("report.json");
  std::ofstream(report_path) << render(hostileAnalysis(dir), Format::kJson);
  const std::string check =
      "import json, sys\n"
      "try:\n"
      "    import jsonschema\n"
      "except ImportError:\n"
      "    print(\"skip\"); sys.exit(0)\n"
      "schema = json.load(open(sys.argv[1]))\n"
      "jsonschema.Draft202012Validator.check_schema(schema)\n"
      "jsonschema.validate(json.load(open(sys.argv[2])), schema)\n"
      "print(\"ok\")\n";
  const std::string result = runPython(check, schema_path + " " + report_path);
  if (result == "skip\n") GTEST_SKIP() << "jsonschema is not installed";
  EXPECT_EQ(result, "ok\n");
}

TEST(Sarif, IsStructurallyValid210WithLinesForLocatedFindings) {
  TempDir dir;
  const Analysis analysis = hostileAnalysis(dir);
  const auto document = nlohmann::json::parse(render(analysis, Format::kSarif));
  EXPECT_EQ(document["version"], "2.1.0");
  EXPECT_EQ(document["$schema"], "https://json.schemastore.org/sarif-2.1.0.json");
  ASSERT_EQ(document["runs"].size(), 1u);
  const auto& run = document["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "torchscope");
  const auto& rules = run["tool"]["driver"]["rules"];
  std::set<std::string> ids;
  for (const auto& rule : rules) EXPECT_TRUE(ids.insert(rule["id"].get<std::string>()).second);
  ASSERT_EQ(run["results"].size(), analysis.findings.size());
  bool located = false;
  for (const auto& result : run["results"]) {
    const auto rule = result["ruleId"].get<std::string>();
    ASSERT_TRUE(ids.count(rule)) << rule;
    EXPECT_EQ(rules[result["ruleIndex"].get<std::size_t>()]["id"], rule);
    EXPECT_TRUE(result["level"] == "error" || result["level"] == "warning" || result["level"] == "note");
    EXPECT_FALSE(result["message"]["text"].get<std::string>().empty());
    if (!result.contains("locations")) continue;
    const auto& physical = result["locations"][0]["physicalLocation"];
    const auto uri = physical["artifactLocation"]["uri"].get<std::string>();
    EXPECT_EQ(uri.find_first_of(" <>\"`|"), std::string::npos) << uri;
    EXPECT_EQ(uri.rfind("file:///tmp/", 0), 0u) << uri;
    EXPECT_EQ(physical["region"]["startLine"], 7);
    located = true;
  }
  EXPECT_TRUE(located);
}

TEST(Junit, ParsesAsXmlWithConsistentCounts) {
  TempDir dir;
  const std::string path = dir.file("report.xml");
  std::ofstream(path) << render(hostileAnalysis(dir), Format::kJunit);
  const std::string check =
      "import sys, xml.etree.ElementTree as ET\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "assert root.tag == \"testsuites\", root.tag\n"
      "for suite in root.iter(\"testsuite\"):\n"
      "    cases = suite.findall(\"testcase\")\n"
      "    assert int(suite.get(\"tests\")) == len(cases)\n"
      "    assert int(suite.get(\"failures\")) == sum(1 for c in cases if c.find(\"failure\") is not None)\n"
      "    assert all(c.get(\"classname\") and c.get(\"name\") for c in cases)\n"
      "print(\"ok\")\n";
  EXPECT_EQ(runPython(check, path), "ok\n");
}

TEST(Text, ColourOnlyWhenAsked) {
  TempDir dir;
  const Analysis analysis = hostileAnalysis(dir);
  EXPECT_EQ(render(analysis, Format::kText).find('\x1b'), std::string::npos);
  RenderOptions colour;
  colour.color = true;
  EXPECT_NE(render(analysis, Format::kText, colour).find('\x1b'), std::string::npos);
}

TEST(Formats, ParseFormatKnowsEveryName) {
  for (const char* name : {"text", "json", "markdown", "sarif", "junit", "html"}) EXPECT_TRUE(parseFormat(name)) << name;
  EXPECT_FALSE(parseFormat("yaml"));
}

TEST(Save, FindingsAreStoredAndReplaced) {
  TempDir dir;
  const std::string store = fixtureStore(dir, "syncs");
  auto analysis = analyze({store});
  ASSERT_TRUE(analysis.ok());
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(saveFindings(store, analysis->findings).ok());
    auto reader = store::Reader::open(store);
    ASSERT_TRUE(reader.ok());
    auto saved = (*reader)->load<store::Finding>();
    ASSERT_TRUE(saved.ok());
    ASSERT_EQ(saved->size(), analysis->findings.size());
    EXPECT_EQ((*saved)[0].rule, analysis->findings[0].rule.text());
  }
}

TEST(BadInput, ForeignAndMissingFilesFailClearly) {
  TempDir dir;
  const std::string foreign = dir.file("notes.db");
  std::ofstream(foreign) << "this is not a database\n";
  auto analysis = analyze({foreign});
  ASSERT_FALSE(analysis.ok());
  EXPECT_NE(analysis.error().message.find("notes.db"), std::string::npos);
  auto missing = analyze({dir.file("missing.db")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace torchscope::analyzer::testing
