// How every command reads its options' numbers, names its errors' exit codes and writes its output: one helper
// each, so that the same cause gives the same message and exit code in every command (docs/reliability.md,
// *Exit codes*).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::cli {

// A numeric option's check: a finite number from `min` to `max` (a whole one for an integer option). NaN and
// infinities are refused with the option's name and exit code 2, as CLI::Range lets NaN through.
template <class T>
CLI::Validator numberIn(T min, T max) {
  std::ostringstream range;
  range << (std::is_integral_v<T> ? "INT" : "NUMBER") << " in [" << min << ", " << max << "]";
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        T value{};
        const bool parsed = CLI::detail::lexical_cast(input, value);
        bool finite = parsed;
        if constexpr (std::is_floating_point_v<T>) finite = parsed && std::isfinite(value);
        if (finite && value >= min && value <= max) return {};
        std::ostringstream message;
        message << "must be a " << (std::is_integral_v<T> ? "whole number" : "finite number") << " from " << min
                << " to " << max << ", not '" << input << "'";
        return message.str();
      },
      range.str());
}

// 1 when the system refused (I/O, a feature not available here), 2 for bad input: a missing, foreign, damaged or
// refused file, a value out of range.
[[nodiscard]] int exitCodeFor(const Error& error);

// Prints the error's message and ends the command with exitCodeFor(error).
[[noreturn]] void failWith(const Error& error);

// "" and "-" are standard output.
[[nodiscard]] bool isStandardOutput(const std::string& output);

// Refuses, with exit code 2 and before anything is read or written, an output file that is one of `inputs` or not
// a regular file (store::checkOutputFile). Standard output passes.
void checkOutput(const std::string& output, const std::vector<std::string>& inputs);

// `text` to standard output, or as the whole new content of the file `output` (written beside it, renamed over it
// once complete); exit code 1 with the reason when it cannot be written.
void writeOutput(const std::string& output, const std::string& text);

// For a command that reads only the stores it is given: when `input` is a store whose job's other processes wrote
// stores beside it (torchrun's ranks: run.db -> run.rank<r>.<pid>.db), says on stderr which, and how to read them.
void noteCompanionStores(const std::string& command, const std::string& input);

// Sends what the command prints (std::cout) straight to the descriptor, keeping the reason of a failed write.
void checkStandardOutput();

// Flushes standard output; exit code 1 with the reason when what the command printed could not be written (a full
// disk, a closed descriptor); quiet for a reader that went away (EPIPE), as other Unix tools are. Returns the exit
// code to end with: `code`, or 1 when the output was lost.
[[nodiscard]] int finishStandardOutput(int code);

}  // namespace torchscope::cli
