// The one QApplication of a GUI test process, on the offscreen platform (no display needed).
#pragma once

#include <gtest/gtest.h>

#include <QApplication>
#include <QSignalSpy>

#include <memory>
#include <string>
#include <vector>

#include "torchscope/gui/MainWindow.h"

namespace torchscope::gui::testing {

inline QApplication& offscreenApplication() {
  static int argc = 1;
  static char name[] = "gui_test";
  static char* argv[] = {name, nullptr};
  static QApplication* app = [] {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    return new QApplication(argc, argv);
  }();
  return *app;
}

// A 1600x1000 main window showing `stores`, once the analysis it runs after the first paint has finished (stores
// without findings, as recorded or imported, are analysed on open).
inline void openAnalysedWindow(std::unique_ptr<MainWindow>& window, const std::vector<std::string>& stores) {
  offscreenApplication();
  window = std::make_unique<MainWindow>();
  window->resize(1600, 1000);
  window->show();
  QSignalSpy analysed(window.get(), &MainWindow::analysed);
  window->open(stores);
  ASSERT_TRUE(analysed.wait(120'000));
  ASSERT_TRUE(analysed.front().front().toBool());
}

}  // namespace torchscope::gui::testing
