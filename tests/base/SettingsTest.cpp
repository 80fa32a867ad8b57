// The settings table (torchscope/base/Settings.h): its parsers on good and bad values, docs/collector.md's
// environment table row by row against it, and no production source spelling a setting's name but the table.
#include "torchscope/base/Settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace torchscope::base {
namespace {

namespace fs = std::filesystem;
using namespace settings;

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The row docs/collector.md must hold for the setting.
std::string expectedRow(const Setting& setting) {
  const std::string fallback = setting.default_value.empty() ? "unset" : "`" + std::string(setting.default_value) + "`";
  return "| `" + std::string(setting.name) + "` | " + describeType(setting) + " | " + fallback + " | " +
         std::string(setting.meaning) + " |";
}

TEST(Settings, EveryNameIsDeclaredOnceWithADefaultOfItsOwnType) {
  std::set<std::string_view> names;
  for (const Setting* setting : kAllSettings) {
    EXPECT_TRUE(names.insert(setting->name).second) << setting->name << " is declared twice";
    EXPECT_EQ(setting->name.rfind("TORCHSCOPE_", 0), 0U) << setting->name;
    EXPECT_FALSE(setting->meaning.empty()) << setting->name;
    const std::string fallback(setting->default_value);
    // The default itself parses, without a warning.
    switch (setting->type) {
      case SettingType::kInteger: EXPECT_TRUE(parseInteger(*setting, fallback).warning.empty()) << setting->name; break;
      case SettingType::kNumber: EXPECT_TRUE(parseNumber(*setting, fallback).warning.empty()) << setting->name; break;
      case SettingType::kChoice: EXPECT_TRUE(parseChoice(*setting, fallback).warning.empty()) << setting->name; break;
      case SettingType::kFlag: EXPECT_TRUE(fallback == "0" || fallback == "1") << setting->name; break;
      default: break;
    }
  }
}

TEST(Settings, AFlagIsFalseOnlyWhenItSaysSo) {
  EXPECT_TRUE(parseFlag(kRegions, "").value);  // the default
  EXPECT_FALSE(parseFlag(kVerbose, "").value);
  for (const char* no : {"0", "false", "OFF", "No"}) EXPECT_FALSE(parseFlag(kRegions, no).value) << no;
  for (const char* yes : {"1", "yes", "true", "2"}) EXPECT_TRUE(parseFlag(kVerbose, yes).value) << yes;
}

TEST(Settings, AValueOutOfItsTypeOrRangeIsTheDefaultWithAWarningThatSaysWhy) {
  EXPECT_EQ(parseInteger(kBufferMb, "").value, 64);
  EXPECT_FALSE(parseInteger(kBufferMb, "").set);
  EXPECT_EQ(parseInteger(kBufferMb, "128").value, 128);
  EXPECT_TRUE(parseInteger(kBufferMb, "128").warning.empty());
  for (const char* bad : {"0", "-5", "12x", "1.5", "99999999999999999999", " 8"}) {
    const auto parsed = parseInteger(kBufferMb, bad);
    EXPECT_EQ(parsed.value, 64) << bad;
    EXPECT_EQ(parsed.warning,
              "TORCHSCOPE_BUFFER_MB=" + std::string(bad) + " is not a whole number from 1 to 1048576: 64 is used");
  }
  EXPECT_DOUBLE_EQ(parseNumber(kSampleBudget, "2.5").value, 2.5);
  for (const char* bad : {"101", "-1", "nan", "inf", "lots"}) {
    EXPECT_DOUBLE_EQ(parseNumber(kSampleBudget, bad).value, 0.3) << bad;
    EXPECT_FALSE(parseNumber(kSampleBudget, bad).warning.empty()) << bad;
  }
  EXPECT_EQ(parseChoice(kSampleReader, "gil").value, "gil");
  EXPECT_EQ(parseChoice(kSampleReader, "fast").value, "direct");
  EXPECT_EQ(parseChoice(kSampleReader, "fast").warning,
            "TORCHSCOPE_SAMPLE_READER=fast is not one of direct, gil, compare: direct is used");
  // A setting with nothing for its default says that the value is ignored.
  EXPECT_EQ(parseChoice(kWindowCaptureRange, "nvtx").warning,
            "TORCHSCOPE_WINDOW_CAPTURE_RANGE=nvtx is not one of cuda-profiler: it is ignored");
}

TEST(Settings, TheEnvironmentIsReadThroughTheTable) {
  unsetenv(std::string(kUserCode.name).c_str());
  EXPECT_FALSE(settingIsSet(kUserCode));
  EXPECT_TRUE(readEntries(kUserCode).empty());
  setenv(std::string(kUserCode.name).c_str(), "/a::/b", 1);
  EXPECT_EQ(readEntries(kUserCode), (std::vector<std::string>{"/a", "/b"}));
  setenv(std::string(kTorchImportHooks.name).c_str(), "m:f,,n:g", 1);
  EXPECT_EQ(readEntries(kTorchImportHooks), (std::vector<std::string>{"m:f", "n:g"}));
  setenv(std::string(kSampleHz.name).c_str(), "250", 1);
  EXPECT_EQ(readInteger(kSampleHz).value, 250);
  EXPECT_EQ(settingText(kSampleReader), "direct");
  unsetenv(std::string(kUserCode.name).c_str());
  unsetenv(std::string(kTorchImportHooks.name).c_str());
  unsetenv(std::string(kSampleHz.name).c_str());
}

// docs/collector.md's *Environment* table is the declaration, row by row, in its order.
TEST(Settings, TheCollectorsEnvironmentTableIsTheDeclaration) {
  const std::string doc = readFile(fs::path(TORCHSCOPE_SOURCE_DIR) / "docs" / "collector.md");
  const std::size_t section = doc.find("### Environment");
  ASSERT_NE(section, std::string::npos);
  std::istringstream lines(doc.substr(section));
  std::vector<std::string> rows;
  std::string line;
  bool in_table = false;
  while (std::getline(lines, line)) {
    if (line.rfind("| `", 0) == 0) {
      rows.push_back(line);
      in_table = true;
    } else if (in_table && line.rfind('|', 0) != 0) {
      break;
    }
  }
  std::string expected;
  for (const Setting* setting : kAllSettings) expected += expectedRow(*setting) + "\n";
  std::string found;
  for (const std::string& row : rows) found += row + "\n";
  EXPECT_EQ(found, expected) << "docs/collector.md's environment table, as the declaration has it:\n" << expected;
}

// Every setting is named through the table: a name spelled in code outside a comment is a second declaration.
TEST(Settings, NoProductionSourceSpellsASettingsName) {
  std::set<std::string> names;
  for (const Setting* setting : kAllSettings) names.emplace(setting->name);
  const std::regex name_pattern("TORCHSCOPE_[A-Z0-9_]+");
  std::vector<std::string> offenders;
  for (const char* module : {"base", "store", "collector", "interop", "analyzer", "compiler", "gui", "cli"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(TORCHSCOPE_SOURCE_DIR) / module)) {
      const fs::path& path = entry.path();
      const std::string extension = path.extension().string();
      const bool python = extension == ".py";
      if (!(python || extension == ".cpp" || extension == ".h") || path.filename() == "Settings.h" ||
          path.filename() == "_settings.py") {
        continue;
      }
      std::istringstream lines(readFile(path));
      std::string line;
      int number = 0;
      bool in_comment = false;  // a Python docstring, a C /* */ block
      while (std::getline(lines, line)) {
        ++number;
        std::string code = line;
        // Docstrings and comments explain; only code names a variable.
        if (python) {
          int quotes = 0;
          for (std::size_t at = code.find("\"\"\""); at != std::string::npos; at = code.find("\"\"\"", at + 3))
            ++quotes;
          if (in_comment || quotes > 0) {
            if (quotes % 2 == 1) in_comment = !in_comment;
            continue;
          }
          code = code.substr(0, code.find('#'));
        } else {
          if (in_comment || code.find("/*") != std::string::npos) {
            in_comment = code.find("*/") == std::string::npos;
            continue;
          }
          const std::size_t comment = code.find("//");
          const std::size_t first_quote = code.find('"');
          if (comment != std::string::npos && (first_quote == std::string::npos || comment < first_quote)) {
            code = code.substr(0, comment);
          }
        }
        for (std::sregex_iterator match(code.begin(), code.end(), name_pattern), end; match != end; ++match) {
          if (names.count(match->str()) > 0) {
            offenders.push_back(path.lexically_relative(TORCHSCOPE_SOURCE_DIR).string() + ":" + std::to_string(number) +
                                ": " + match->str());
          }
        }
      }
    }
  }
  std::string listed;
  for (const std::string& offender : offenders) listed += offender + "\n";
  EXPECT_TRUE(offenders.empty()) << "name them through torchscope/base/Settings.h (C++) or _settings (Python):\n"
                                 << listed;
}

}  // namespace
}  // namespace torchscope::base
