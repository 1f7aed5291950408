#include "tree_columns.h"

#include <QEvent>
#include <QHeaderView>
#include <QTreeWidget>

#include <algorithm>

namespace ramiel::studio {
namespace {

// The name column gets at most this share of the width.
constexpr double kNameShare = 0.45;

class ColumnFitter : public QObject {
public:
    explicit ColumnFitter(QTreeWidget* tree) : QObject(tree), tree_(tree) {}

    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (watched == tree_->viewport() && event->type() == QEvent::Resize)
            fitColumns(tree_);
        return false;
    }

private:
    QTreeWidget* tree_;
};

}  // namespace

void keepColumnsFitted(QTreeWidget* tree, Qt::TextElideMode elide)
{
    tree->setTextElideMode(elide);
    tree->header()->setSectionResizeMode(QHeaderView::Interactive);
    tree->header()->setStretchLastSection(true);
    tree->viewport()->installEventFilter(new ColumnFitter(tree));
    fitColumns(tree);
}

void fitColumns(QTreeWidget* tree)
{
    const int columns = tree->columnCount();
    const int total = tree->viewport()->width();
    if (columns < 2 || total <= 0)
        return;
    // Rows spanning every column (section titles) do not count towards the name column.
    const QTreeWidgetItem* header = tree->headerItem();
    int wanted = tree->fontMetrics().horizontalAdvance(header ? header->text(0) : QString()) + 16;
    for (QTreeWidgetItemIterator it(tree); *it; ++it) {
        const QTreeWidgetItem* item = *it;
        if (item->isFirstColumnSpanned() || item->isHidden())
            continue;
        int depth = tree->rootIsDecorated() ? 1 : 0;
        for (const QTreeWidgetItem* p = item->parent(); p; p = p->parent())
            ++depth;
        wanted = std::max(wanted, tree->fontMetrics().horizontalAdvance(item->text(0)) +
                                      tree->indentation() * depth + 12);
    }
    const int name = std::min(wanted, int(total * kNameShare));
    tree->setColumnWidth(0, name);
    const int rest = total - name;
    for (int c = 1; c + 1 < columns; ++c)
        tree->setColumnWidth(c, rest / (columns - 1));
}

void setFullTextTips(QTreeWidgetItem* item)
{
    for (int c = 0; c < item->columnCount(); ++c)
        if (item->toolTip(c).isEmpty() && !item->text(c).isEmpty())
            item->setToolTip(c, item->text(c));
}

}  // namespace ramiel::studio
