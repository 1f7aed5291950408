#include "find_bar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>

namespace ramiel::studio {

FindBar::FindBar(QWidget* parent) : QWidget(parent), edit_(new QLineEdit(this)), count_(new QLabel(this))
{
    edit_->setPlaceholderText(tr("Find a node by name or operator type"));
    edit_->setClearButtonEnabled(true);
    count_->setMinimumWidth(count_->fontMetrics().horizontalAdvance(QStringLiteral("999 of 999")));
    auto* prev = new QToolButton(this);
    prev->setArrowType(Qt::UpArrow);
    prev->setToolTip(tr("Previous match (Shift+F3)"));
    auto* nextButton = new QToolButton(this);
    nextButton->setArrowType(Qt::DownArrow);
    nextButton->setToolTip(tr("Next match (F3 or Enter)"));
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("x"));
    close->setToolTip(tr("Close (Esc)"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 3, 6, 3);
    layout->addWidget(new QLabel(tr("Find:"), this));
    layout->addWidget(edit_, 1);
    layout->addWidget(prev);
    layout->addWidget(nextButton);
    layout->addWidget(count_);
    layout->addWidget(close);
    connect(edit_, &QLineEdit::textChanged, this, &FindBar::search);
    connect(edit_, &QLineEdit::returnPressed, this, &FindBar::next);
    connect(prev, &QToolButton::clicked, this, &FindBar::previous);
    connect(nextButton, &QToolButton::clicked, this, &FindBar::next);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
}

void FindBar::setGraph(const Graph* graph)
{
    graph_ = graph;
    search();
}

void FindBar::activate()
{
    QWidget::show();
    edit_->setFocus();
    edit_->selectAll();
}

void FindBar::search()
{
    matches_.clear();
    current_ = -1;
    const QString needle = edit_->text().trimmed();
    if (graph_ && !needle.isEmpty()) {
        // Exact operator-type matches first (e.g. "Conv"), then names containing the text.
        for (const Node& n : graph_->nodes())
            if (QString::fromStdString(n.opType).compare(needle, Qt::CaseInsensitive) == 0)
                matches_.push_back(n.id);
        if (matches_.empty())
            for (const Node& n : graph_->nodes())
                if (QString::fromStdString(n.name).contains(needle, Qt::CaseInsensitive) ||
                    QString::fromStdString(n.opType).contains(needle, Qt::CaseInsensitive))
                    matches_.push_back(n.id);
    }
    if (needle.isEmpty())
        count_->clear();
    else if (matches_.empty())
        count_->setText(tr("no match"));
    else
        show(0);
}

void FindBar::show(int index)
{
    if (matches_.empty())
        return;
    const int n = int(matches_.size());
    current_ = ((index % n) + n) % n;
    count_->setText(tr("%1 of %2").arg(current_ + 1).arg(n));
    Q_EMIT nodeFound(matches_[size_t(current_)]);
}

void FindBar::next()
{
    if (current_ < 0)
        search();
    else
        show(current_ + 1);
}

void FindBar::previous() { show(current_ - 1); }

void FindBar::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Escape)
        hide();
    else
        QWidget::keyPressEvent(event);
}

}  // namespace ramiel::studio
