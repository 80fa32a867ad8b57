#include "torchscope/gui/App.h"

#include <QApplication>
#include <QEventLoop>
#include <QItemSelectionModel>
#include <QPixmap>
#include <QSaveFile>
#include <QTableView>
#include <QTimer>

#include <limits>
#include <optional>

#include "torchscope/gui/ItemModels.h"
#include "torchscope/gui/MainWindow.h"
#include "torchscope/gui/RankTable.h"
#include "torchscope/gui/RunFolderWindow.h"
#include "torchscope/gui/TimelineView.h"
#include "torchscope/store/Files.h"
#include "torchscope/store/Reader.h"
#include "torchscope/store/RunFolder.h"

namespace torchscope::gui {

namespace {

constexpr int kScreenshotLoadTimeoutMs = 300'000;

bool haveDisplay() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

// Waits for the window's background load, and for the analysis of a store without findings (it
// comes next) so that the picture shows them; false when loading failed or timed out.
bool waitUntilLoaded(MainWindow& window, const std::vector<std::string>& paths) {
  QEventLoop loop;
  bool ok = false;
  QObject::connect(&window, &MainWindow::loaded, &loop, [&](bool loaded) {
    ok = loaded;
    const Timeline* timeline = window.timelineView()->timeline();
    if (!loaded || timeline == nullptr || !timeline->records.findings.empty()) loop.quit();
  });
  QObject::connect(&window, &MainWindow::analysed, &loop, &QEventLoop::quit);
  QTimer::singleShot(kScreenshotLoadTimeoutMs, &loop, &QEventLoop::quit);
  // The picture is of the full model: an overview first would only cost a second read.
  LoadLimits limits;
  limits.overview_from_rows = std::numeric_limits<std::uint64_t>::max();
  window.open(paths, limits);
  loop.exec();
  return ok;
}

// For the picture, the first finding's slice is selected so the details panel shows something.
void selectFirstFinding(MainWindow& window) {
  const Timeline* timeline = window.timelineView()->timeline();
  if (timeline == nullptr || window.findingsModel()->rowCount() == 0) return;
  const FindingLocation location = locateFinding(*timeline, window.findingsModel()->table().finding(0));
  if (!location.slices.empty()) window.timelineView()->select(location.slices.front(), false);
}

Result<void> savePicture(QWidget& window, const std::string& path) {
  QApplication::processEvents();
  // Written beside the file and renamed over it once complete, as every output of torchscope.
  QSaveFile file(QString::fromStdString(path));
  if (!file.open(QIODevice::WriteOnly) || !window.grab().save(&file, "PNG") || !file.commit()) {
    return makeError(ErrorCode::kIo, path + ": cannot write the screenshot (" + file.errorString().toStdString() + ")");
  }
  return {};
}

Result<void> renderScreenshot(const GuiOptions& options, const std::vector<std::string>& stores) {
  MainWindow window;
  window.resize(options.width, options.height);
  window.show();
  if (!waitUntilLoaded(window, stores)) {
    return makeError(ErrorCode::kIo, "could not load " + stores.front() +
                                         (stores.size() > 1 ? " and the other stores" : "") + ": " +
                                         window.loadError());
  }
  selectFirstFinding(window);
  return savePicture(window, options.screenshot_path);
}

// A large run folder's picture: its table of ranks once every store's facts are read.
Result<void> renderRunFolderScreenshot(const GuiOptions& options, const std::vector<std::string>& stores) {
  RunFolderWindow window;
  window.resize(options.width, options.height);
  window.show();
  QEventLoop loop;
  bool ok = false;
  QObject::connect(&window, &RunFolderWindow::tableReady, &loop, [&](bool ready) {
    ok = ready;
    loop.quit();
  });
  QTimer::singleShot(kScreenshotLoadTimeoutMs, &loop, &QEventLoop::quit);
  window.open(options.store_paths.front(), stores);
  loop.exec();
  if (!ok) {
    return makeError(ErrorCode::kIo,
                     "could not read the stores of " + options.store_paths.front() + ": " + window.loadError());
  }
  return savePicture(window, options.screenshot_path);
}

}  // namespace

Result<void> runGui(const GuiOptions& options) {
  auto stores = store::expandRunFolders(options.store_paths);
  if (!stores) return stores.error();
  if (!options.screenshot_path.empty()) {
    if (auto writable = store::checkOutputFile(options.screenshot_path, *stores); !writable) return writable.error();
  }
  // A large run folder opens as its table of ranks, where a damaged store is a row that says so.
  const bool run_folder_view = wantsRunFolderView(options.store_paths, stores->size());
  // Otherwise fail on a bad store before any window exists, with the store's own error.
  for (const std::string& path : run_folder_view ? std::vector<std::string>{} : *stores) {
    if (auto reader = store::Reader::open(path); !reader) return reader.error();
  }
  const bool screenshot = !options.screenshot_path.empty();
  if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  if (!haveDisplay()) {
    return makeError(ErrorCode::kUnsupported, "no display (set DISPLAY, or render a PNG with --screenshot)");
  }
  static int argc = 1;
  static char program[] = "torchscope";
  static char* argv[] = {program, nullptr};
  std::optional<QApplication> owned_app;
  if (QApplication::instance() == nullptr) owned_app.emplace(argc, argv);
  if (screenshot) {
    return run_folder_view ? renderRunFolderScreenshot(options, *stores) : renderScreenshot(options, *stores);
  }
  if (run_folder_view) {
    RunFolderWindow window;
    window.resize(options.width, options.height);
    window.show();
    window.open(options.store_paths.front(), *stores);
    QApplication::exec();
    return {};
  }

  MainWindow window;
  window.resize(options.width, options.height);
  window.show();
  window.open(*stores);
  QApplication::exec();
  return {};
}

}  // namespace torchscope::gui
