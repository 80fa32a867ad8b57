// The HTML report in a real browser: headless Chromium renders the report of a CPU run (no GPU activity); the page
// must log no console error (a blocked style, a broken reference) and its timeline overview must show the steps,
// compilations, graph breaks, recompiles and host memory in their colours. Skipped when chromium is not installed
// (scripts/bootstrap.sh all installs it).
#include <fmt/format.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <gmock/gmock.h>

#include "TestSupport.h"
#include "torchscope/analyzer/Analyzer.h"
#include "torchscope/analyzer/Report.h"
#include "torchscope/testing/Subprocess.h"

namespace torchscope::analyzer::testing {
namespace {

struct Image {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::array<std::uint8_t, 3>> pixels;  // row by row
};

std::uint32_t bigEndian(const std::string& bytes, std::size_t at) {
  return (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at])) << 24) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 2])) << 8) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + 3]));
}

int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a);
  const int pb = std::abs(p - b);
  const int pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

// The 8-bit RGB or RGBA, non-interlaced PNG that Chromium's --screenshot writes.
std::optional<Image> readPng(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  if (bytes.size() < 33 || bytes.compare(1, 3, "PNG") != 0) return std::nullopt;
  Image image;
  int channels = 0;
  std::string compressed;
  for (std::size_t at = 8; at + 8 <= bytes.size();) {
    const std::uint32_t length = bigEndian(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) return std::nullopt;
    if (type == "IHDR") {
      image.width = bigEndian(bytes, at + 8);
      image.height = bigEndian(bytes, at + 12);
      const int depth = bytes[at + 16];
      const int color = bytes[at + 17];
      if (depth != 8 || (color != 2 && color != 6) || bytes[at + 20] != 0) return std::nullopt;
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      compressed += bytes.substr(at + 8, length);
    }
    at += 12 + length;
  }
  const std::size_t stride = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(channels);
  std::vector<std::uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (channels == 0 || uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(compressed.data()),
                                  compressed.size()) != Z_OK || raw_size != raw.size()) {
    return std::nullopt;
  }
  std::vector<std::uint8_t> previous(stride, 0);
  std::vector<std::uint8_t> row(stride);
  for (std::uint32_t y = 0; y < image.height; ++y) {
    const std::uint8_t* line = raw.data() + y * (stride + 1);
    const int filter = line[0];
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<std::size_t>(channels) ? row[i - channels] : 0;
      const int b = previous[i];
      const int c = i >= static_cast<std::size_t>(channels) ? previous[i - channels] : 0;
      const int predicted = filter == 1 ? a : filter == 2 ? b : filter == 3 ? (a + b) / 2 : filter == 4 ? paeth(a, b, c) : 0;
      row[i] = static_cast<std::uint8_t>(line[1 + i] + predicted);
    }
    for (std::uint32_t x = 0; x < image.width; ++x) {
      const std::uint8_t* pixel = row.data() + static_cast<std::size_t>(x) * channels;
      image.pixels.push_back({pixel[0], pixel[1], pixel[2]});
    }
    previous = row;
  }
  return image;
}

// Pixels within a small distance of `rgb` (0xRRGGBB): antialiased edges aside, what a lane drew in that colour.
std::size_t pixelsOf(const Image& image, std::uint32_t rgb) {
  std::size_t count = 0;
  for (const auto& pixel : image.pixels) {
    const int dr = pixel[0] - static_cast<int>((rgb >> 16) & 0xff);
    const int dg = pixel[1] - static_cast<int>((rgb >> 8) & 0xff);
    const int db = pixel[2] - static_cast<int>(rgb & 0xff);
    if (dr * dr + dg * dg + db * db <= 3 * 6 * 6) ++count;
  }
  return count;
}

std::string chromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    const auto found = torchscope::testing::runShell(std::string("command -v ") + name);
    if (found.exit_code == 0 && !found.out.empty()) return found.out.substr(0, found.out.find('\n'));
  }
  return "";
}

TEST(HtmlInBrowser, CpuRunOverviewIsDrawnWithoutConsoleErrors) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (scripts/bootstrap.sh all installs it): the HTML report was not checked in a browser";
  TempDir dir;
  AnalyzeOptions options;
  options.timeline_buckets = 160;
  auto analysis = analyze({fixtureStore(dir, "cpu_overview")}, options);
  ASSERT_TRUE(analysis.ok());
  ASSERT_EQ(analysis->runs.front().kernels, 0);  // a CPU run: no GPU lanes, the rest must still be drawn
  const std::string html = render(*analysis, Format::kHtml);
  // Each finding links to its place on the axis, and its place back to it.
  for (std::size_t i = 1; i <= analysis->findings.size(); ++i) {
    EXPECT_THAT(html, ::testing::HasSubstr(fmt::format("id=\"finding-{0}\"", i)));
    EXPECT_THAT(html, ::testing::HasSubstr(fmt::format("href=\"#at-1-{0}\"", i)));
    EXPECT_THAT(html, ::testing::HasSubstr(fmt::format("<a href=\"#finding-{0}\"><g id=\"at-1-{0}\"", i)));
  }
  const std::string page = dir.file("report.html");
  std::ofstream(page, std::ios::binary) << html;
  const std::string screenshot = dir.file("report.png");
  // A profile of its own: nothing of the user's browser is read or written.
  const auto outcome = torchscope::testing::runShell(
      "'" + browser + "' --headless=new --disable-gpu --no-sandbox --no-first-run --user-data-dir='" +
      dir.file("profile") + "' --enable-logging=stderr --v=0 --hide-scrollbars --window-size=1000,2200 --screenshot='" +
      screenshot + "' 'file://" + page + "' 2>&1");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.out;
  // The page's console, as Chromium logs it: "...:CONSOLE(<line>)] "<message>", source: ...".
  EXPECT_THAT(outcome.out, ::testing::Not(::testing::HasSubstr(":CONSOLE"))) << outcome.out;
  const auto image = readPng(screenshot);
  ASSERT_TRUE(image) << "cannot read the screenshot " << screenshot;
  EXPECT_GT(pixelsOf(*image, 0x64b5f6) + pixelsOf(*image, 0x1565c0), 3000u) << "steps";
  EXPECT_GT(pixelsOf(*image, 0x8e24aa), 1500u) << "compilations";
  EXPECT_GT(pixelsOf(*image, 0xef6c00), 20u) << "the graph break";
  EXPECT_GT(pixelsOf(*image, 0xd81b60), 40u) << "the recompiles";
  EXPECT_GT(pixelsOf(*image, 0xa5d6a7), 2000u) << "host memory";
}

}  // namespace
}  // namespace torchscope::analyzer::testing
