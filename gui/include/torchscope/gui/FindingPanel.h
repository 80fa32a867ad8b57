// What the side panel shows for a finding: its explanation, the fix it proposes and, once
// `torchscope fix` has run, the fix's measured result; and the finding's source file with its line.
// Qt-free.
//
// Error contract: nothing fails; a source file that cannot be read gives a SourceFile with `error`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchscope/analyzer/Finding.h"
#include "torchscope/store/Records.h"

namespace torchscope::gui {

// Plain-text paragraphs: what happened, where, what to change, and what the fix measured.
[[nodiscard]] std::string findingText(const analyzer::Finding& finding,
                                      const std::vector<store::FixExperiment>& experiments);

struct SourceFile {
  std::string path;  // the file that was read, or the one that was looked for
  std::vector<std::string> lines;
  std::int64_t line = -1;  // 1-based line to highlight, -1 for none
  std::string error;       // why it could not be read
};

// Reads the finding's file: as recorded when absolute, else relative to each of `roots` in turn (the
// stores' folders, the working directory).
[[nodiscard]] SourceFile readSource(const std::string& file, std::int64_t line, const std::vector<std::string>& roots);

}  // namespace torchscope::gui
