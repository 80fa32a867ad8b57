// A command line as one line of text: how the collector records a job's (run.command_line) and how `fix` names the
// command the user gave. compiler::splitCommandLine splits it back, so every argument survives the round trip;
// nothing ever hands the line to a shell.
#pragma once

#include <string>
#include <vector>

namespace torchscope::store {

// One argument as a POSIX shell word: bare when it is made of safe characters, else in single quotes with each '
// written '\''.
[[nodiscard]] inline std::string shellWord(const std::string& argument) {
  const bool safe = !argument.empty() && argument.find_first_not_of(
                                             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                             "_@%+=:,./-") == std::string::npos;
  if (safe) return argument;
  std::string word = "'";
  for (const char c : argument) word += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return word + "'";
}

// The arguments as shell words separated by spaces.
[[nodiscard]] inline std::string joinCommandLine(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) {
    if (!text.empty()) text += ' ';
    text += shellWord(word);
  }
  return text;
}

}  // namespace torchscope::store
