#include "compare_view.h"

#include "graph_scene.h"
#include "graph_view.h"
#include "metric_rows.h"
#include "tree_columns.h"

#include <QComboBox>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSpinBox>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace ramiel::studio {

CompareView::CompareView(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), table_(new QTreeWidget(this))
{
    auto* graphs = new QSplitter(Qt::Horizontal, this);
    const char* defaults[2] = {"linear", "heft"};
    for (int k = 0; k < 2; ++k) {
        Side& s = sides_[size_t(k)];
        auto* panel = new QWidget(graphs);
        auto* controls = new QHBoxLayout;
        s.algorithm = new QComboBox(panel);
        for (const SchedulerInfo& info : schedulers())
            s.algorithm->addItem(QString::fromStdString(info.name), QString::fromStdString(info.name));
        s.algorithm->setCurrentIndex(std::max(0, s.algorithm->findData(QString::fromLatin1(defaults[k]))));
        s.degree = new QSpinBox(panel);
        s.degree->setRange(1, 1);
        s.degree->setPrefix(QStringLiteral("d = "));
        s.degree->setToolTip(tr("Hypercluster degree (up to the batch set in Tuning)"));
        controls->addWidget(new QLabel(k == 0 ? tr("<b>A</b>") : tr("<b>B</b>"), panel));
        controls->addWidget(s.algorithm);
        controls->addWidget(s.degree);
        controls->addStretch();
        s.scene = new GraphScene(this);
        s.view = new GraphView(s.scene, panel);
        s.view->setMinimapVisible(false);
        auto* v = new QVBoxLayout(panel);
        v->setContentsMargins(0, 0, 0, 0);
        v->addLayout(controls);
        v->addWidget(s.view, 1);
        graphs->addWidget(panel);
        connect(s.algorithm, &QComboBox::currentIndexChanged, this, [this, k] { reschedule(k); });
        connect(s.degree, &QSpinBox::valueChanged, this, [this, k] { reschedule(k); });
    }
    // Zoom, scroll position and selection follow each other.
    for (int k = 0; k < 2; ++k) {
        GraphView* me = sides_[size_t(k)].view;
        GraphView* other = sides_[size_t(1 - k)].view;
        connect(me, &GraphView::zoomChanged, this, [this, other](double z) {
            if (syncing_)
                return;
            syncing_ = true;
            other->setZoom(z);
            syncing_ = false;
        });
        connect(me, &GraphView::scrolled, this, [this, me, other] {
            if (syncing_)
                return;
            syncing_ = true;
            other->horizontalScrollBar()->setValue(me->horizontalScrollBar()->value());
            other->verticalScrollBar()->setValue(me->verticalScrollBar()->value());
            syncing_ = false;
        });
        connect(sides_[size_t(k)].scene, &GraphScene::nodeSelected, this, [this, k](NodeId n) {
            if (syncing_)
                return;
            syncing_ = true;
            sides_[size_t(1 - k)].scene->selectNode(n);
            syncing_ = false;
        });
    }

    table_->setColumnCount(3);
    table_->setHeaderLabels({tr("Metric"), tr("A"), tr("B")});
    table_->setRootIsDecorated(false);
    table_->setAlternatingRowColors(true);
    keepColumnsFitted(table_);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(graphs);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);

    // Building two more scenes costs UI time: only while the view is visible.
    auto invalidate = [this] {
        stale_ = true;
        if (isVisible())
            rebuildScenes();
    };
    connect(session_, &StudioSession::modelChanged, this, invalidate);
    connect(session_, &StudioSession::layoutChanged, this, invalidate);
    connect(session_, &StudioSession::settingsChanged, this, [this] {
        for (int k = 0; k < 2; ++k)
            sides_[size_t(k)].degree->setMaximum(session_->settings().batch);
        if (isVisible()) {
            reschedule(0);
            reschedule(1);
        } else {
            stale_ = true;
        }
    });
}

void CompareView::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    if (stale_)
        rebuildScenes();
}

PlanSettings CompareView::settingsOf(int side) const
{
    PlanSettings s = session_->settings();
    s.algorithm = sides_[size_t(side)].algorithm->currentData().toString().toStdString();
    s.degree = std::min(sides_[size_t(side)].degree->value(), s.batch);
    return s;
}

void CompareView::rebuildScenes()
{
    stale_ = false;
    for (int k = 0; k < 2; ++k) {
        sides_[size_t(k)].analysis.reset();
        sides_[size_t(k)].scene->setGraph(session_->prepared(), session_->layout());
        sides_[size_t(k)].view->showReadable();
        reschedule(k);
    }
}

void CompareView::reschedule(int side)
{
    if (!session_->prepared())
        return;
    Side& s = sides_[size_t(side)];
    const int generation = ++s.generation;
    auto* watcher = new QFutureWatcher<std::shared_ptr<const PlannedModel>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, side, generation] {
        watcher->deleteLater();
        Side& s = sides_[size_t(side)];
        if (generation != s.generation)
            return;
        auto result = watcher->result();
        if (!result || result->prepared != session_->prepared())
            return;
        s.analysis = result;
        s.scene->setAnalysis(result);
        fillTable();
        if (sides_[0].analysis && sides_[1].analysis)
            Q_EMIT updated();
    });
    watcher->setFuture(session_->planAsync(settingsOf(side)));
}

void CompareView::fillTable()
{
    table_->clear();
    if (!sides_[0].analysis && !sides_[1].analysis)
        return;
    const QVector<MetricRow> a = sides_[0].analysis ? metricRows(*sides_[0].analysis) : QVector<MetricRow>();
    const QVector<MetricRow> b = sides_[1].analysis ? metricRows(*sides_[1].analysis) : QVector<MetricRow>();
    const QVector<MetricRow>& rows = a.isEmpty() ? b : a;
    for (int i = 0; i < rows.size(); ++i) {
        // Graph-level rows are the same on both sides; the schedule rows differ.
        if (rows[i].section.startsWith(tr("Graph")))
            continue;
        const QString va = i < a.size() ? a[i].value : QString();
        const QString vb = i < b.size() ? b[i].value : QString();
        auto* item = new QTreeWidgetItem(table_, {rows[i].name, va, vb});
        item->setToolTip(0, rows[i].help);
        setFullTextTips(item);
        // Bold only what differs by more than 1 %: planning noise of 0.01 % is no difference.
        if (i < a.size() && i < b.size() && rowsDiffer(a[i], b[i])) {
            QFont f = item->font(1);
            f.setBold(true);
            item->setFont(1, f);
            item->setFont(2, f);
        }
    }
    fitColumns(table_);
}

}  // namespace ramiel::studio
