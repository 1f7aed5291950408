// Name/value tables (Metrics, Properties, Compare) that keep their values
// readable: the name column takes what its text needs up to a share of the
// width, the value columns share the rest, and a cell too narrow for its text
// elides it and gives the whole text in its tooltip.
#pragma once

#include <Qt>

class QTreeWidget;
class QTreeWidgetItem;

namespace ramiel::studio {

// Sizes the columns now and whenever the table is resized. `elide` is how
// cells shorten their text (Qt::ElideMiddle keeps the end of long names).
void keepColumnsFitted(QTreeWidget* tree, Qt::TextElideMode elide = Qt::ElideRight);
// Sizes the columns again, after the rows changed.
void fitColumns(QTreeWidget* tree);
// Every cell of `item` gets its full text as its tooltip (unless it has one).
void setFullTextTips(QTreeWidgetItem* item);

}  // namespace ramiel::studio
