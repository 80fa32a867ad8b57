// The one QApplication of a GUI test process, on the offscreen platform (no display needed).
#pragma once

#include <QApplication>

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

}  // namespace torchscope::gui::testing
