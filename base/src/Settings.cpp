#include "torchscope/base/Settings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace torchscope::base {

namespace {

std::string lowered(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(), [](unsigned char c) { return std::tolower(c); });
  return result;
}

std::string environmentValue(const Setting& setting) {
  const char* value = std::getenv(std::string(setting.name).c_str());
  return value != nullptr ? value : "";
}

// A number as docs/collector.md writes it: 1048576, 0.3, 1e+09 as 1000000000.
std::string numberText(double value) {
  std::ostringstream text;
  text.precision(15);
  text << value;
  return text.str();
}

template <typename T>
SettingValue<T> rejected(const Setting& setting, std::string_view text, T fallback, const std::string& expected) {
  const std::string instead =
      setting.default_value.empty() ? "it is ignored" : std::string(setting.default_value) + " is used";
  return {fallback, std::string(setting.name) + "=" + std::string(text) + " is not " + expected + ": " + instead, true};
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> entries;
  for (std::size_t begin = 0; begin <= text.size();) {
    const std::size_t end = std::min(text.find(separator, begin), text.size());
    if (end > begin) entries.emplace_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return entries;
}

}  // namespace

SettingValue<bool> parseFlag(const Setting& setting, std::string_view text) {
  if (text.empty()) return {setting.default_value == "1", "", false};
  const std::string value = lowered(text);
  return {!(value == "0" || value == "false" || value == "off" || value == "no"), "", true};
}

SettingValue<std::int64_t> parseInteger(const Setting& setting, std::string_view text) {
  std::int64_t fallback = 0;
  (void)std::from_chars(setting.default_value.data(), setting.default_value.data() + setting.default_value.size(),
                        fallback);
  if (text.empty()) return {fallback, "", false};
  std::int64_t parsed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size() || static_cast<double>(parsed) < setting.minimum ||
      static_cast<double>(parsed) > setting.maximum) {
    return rejected(setting, text, fallback, describeType(setting));
  }
  return {parsed, "", true};
}

SettingValue<double> parseNumber(const Setting& setting, std::string_view text) {
  const std::string fallback_text(setting.default_value);
  const double fallback = fallback_text.empty() ? 0.0 : std::strtod(fallback_text.c_str(), nullptr);
  if (text.empty()) return {fallback, "", false};
  const std::string value(text);
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !std::isfinite(parsed) || parsed < setting.minimum ||
      parsed > setting.maximum) {
    return rejected(setting, text, fallback, describeType(setting));
  }
  return {parsed, "", true};
}

SettingValue<std::string> parseChoice(const Setting& setting, std::string_view text) {
  if (text.empty()) return {std::string(setting.default_value), "", false};
  const std::vector<std::string> choices = split(setting.choices, '|');
  if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
    return rejected(setting, text, std::string(setting.default_value), describeType(setting));
  }
  return {std::string(text), "", true};
}

std::string settingText(const Setting& setting) {
  std::string value = environmentValue(setting);
  return value.empty() ? std::string(setting.default_value) : value;
}

bool settingIsSet(const Setting& setting) { return !environmentValue(setting).empty(); }

SettingValue<bool> readFlag(const Setting& setting) { return parseFlag(setting, environmentValue(setting)); }
SettingValue<std::int64_t> readInteger(const Setting& setting) {
  return parseInteger(setting, environmentValue(setting));
}
SettingValue<double> readNumber(const Setting& setting) { return parseNumber(setting, environmentValue(setting)); }
SettingValue<std::string> readChoice(const Setting& setting) { return parseChoice(setting, environmentValue(setting)); }

std::vector<std::string> readEntries(const Setting& setting) {
  return split(settingText(setting), setting.type == SettingType::kList ? ',' : ':');
}

std::string describeType(const Setting& setting) {
  switch (setting.type) {
    case SettingType::kFlag: return "a flag";
    case SettingType::kInteger:
      return "a whole number from " + numberText(setting.minimum) + " to " + numberText(setting.maximum);
    case SettingType::kNumber:
      return "a number from " + numberText(setting.minimum) + " to " + numberText(setting.maximum);
    case SettingType::kText: return "text";
    case SettingType::kPaths: return "`:`-separated paths";
    case SettingType::kList: return "a `,`-separated list";
    case SettingType::kChoice: {
      std::string text;
      for (const std::string& choice : split(setting.choices, '|')) text += (text.empty() ? "" : ", ") + choice;
      return "one of " + text;
    }
  }
  return "text";
}

}  // namespace torchscope::base
