#include "Panels.h"

#include <QHeaderView>
#include <QVBoxLayout>

namespace torchscope::gui {

QTableView* makeRowTable(QAbstractItemModel* model) {
  auto* table = new QTableView;
  table->setModel(model);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setSelectionMode(QAbstractItemView::SingleSelection);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->horizontalHeader()->setStretchLastSection(true);
  table->verticalHeader()->hide();
  table->verticalHeader()->setDefaultSectionSize(20);
  table->setWordWrap(false);
  return table;
}

QGroupBox* titled(const QString& title, QWidget* content) {
  auto* box = new QGroupBox(title);
  auto* layout = new QVBoxLayout(box);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(content);
  return box;
}

}  // namespace torchscope::gui
