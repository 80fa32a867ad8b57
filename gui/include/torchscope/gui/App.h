// Entry point of `torchscope gui`: opens the timeline window on a store, or renders it offscreen
// into a PNG and returns. Qt-free so that the CLI needs no Qt headers.
//
// Error contract: kNotFound / kNotTorchscope / kVersion / kCorrupt when the store cannot be opened
// (checked before any window is created), kIo when the screenshot cannot be written, kUnsupported
// when no display is available.
#pragma once

#include <string>
#include <vector>

#include "torchscope/base/Result.h"

namespace torchscope::gui {

struct GuiOptions {
  // Stores shown side by side (the ranks of one job); a run folder stands for its stores
  // (store::expandRunFolders). One run folder of more than kRunFolderViewAboveRanks stores opens as a table of its
  // ranks instead (RunFolderWindow.h), where a store that cannot be read is a row and no error.
  std::vector<std::string> store_paths;
  std::string screenshot_path;  // non-empty: render offscreen into this PNG and exit
  int width = 1600;
  int height = 900;
};

[[nodiscard]] Result<void> runGui(const GuiOptions& options);

}  // namespace torchscope::gui
