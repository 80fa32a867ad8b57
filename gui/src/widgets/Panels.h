// The panels the GUI's windows share: a read-only table of whole rows and a titled frame around a widget.
#pragma once

#include <QAbstractItemModel>
#include <QGroupBox>
#include <QString>
#include <QTableView>

namespace torchscope::gui {

// One row selected at a time, never edited, the last column stretched, rows 20 px high and unwrapped.
[[nodiscard]] QTableView* makeRowTable(QAbstractItemModel* model);

[[nodiscard]] QGroupBox* titled(const QString& title, QWidget* content);

}  // namespace torchscope::gui
