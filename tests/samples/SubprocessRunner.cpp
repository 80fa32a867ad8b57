#include "SubprocessRunner.h"

#include <array>
#include <cstdio>
#include <sstream>
#include <sys/wait.h>

namespace torchscope::tests {

ProcessOutput runPython(const std::string& arguments) {
  const std::string command = std::string("cd '") + TORCHSCOPE_SOURCE_DIR + "' && '" + TORCHSCOPE_PYTHON + "' " +
                              arguments + " 2>&1";
  ProcessOutput result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return result;
  }
  std::array<char, 4096> buffer{};
  size_t read = 0;
  while ((read = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), read);
  }
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) {
    result.exitCode = WEXITSTATUS(status);
  }
  return result;
}

std::map<std::string, std::string> lineFields(const std::string& output, const std::string& prefix) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) != 0) {
      continue;
    }
    std::map<std::string, std::string> fields;
    std::istringstream words(line.substr(prefix.size()));
    std::string word;
    while (words >> word) {
      if (const auto equals = word.find('='); equals != std::string::npos) {
        fields[word.substr(0, equals)] = word.substr(equals + 1);
      }
    }
    return fields;
  }
  return {};
}

std::optional<double> numericField(const std::string& output, const std::string& prefix, const std::string& key) {
  const auto fields = lineFields(output, prefix);
  const auto found = fields.find(key);
  if (found == fields.end()) {
    return std::nullopt;
  }
  try {
    return std::stod(found->second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace torchscope::tests
