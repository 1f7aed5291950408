#include "metrics_panel.h"

#include "metric_rows.h"
#include "tree_columns.h"

#include <QHeaderView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace ramiel::studio {

MetricsPanel::MetricsPanel(QWidget* parent) : QWidget(parent), tree_(new QTreeWidget(this))
{
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Metric"), tr("Value")});
    tree_->setRootIsDecorated(false);
    tree_->setAlternatingRowColors(true);
    tree_->setUniformRowHeights(true);
    keepColumnsFitted(tree_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(tree_);
}

void MetricsPanel::setAnalysis(std::shared_ptr<const PlannedModel> analysis)
{
    analysis_ = std::move(analysis);
    rebuild();
}

void MetricsPanel::setRunFigures(const QList<QPair<QString, QString>>& figures)
{
    run_ = figures;
    rebuild();
}

void MetricsPanel::rebuild()
{
    tree_->clear();
    if (!analysis_)
        return;
    QVector<MetricRow> rows = metricRows(*analysis_);
    for (const auto& [name, value] : run_)
        rows.append({tr("Run (measured)"), name, value, {}});
    QString section;
    for (const MetricRow& row : rows) {
        if (row.section != section) {
            section = row.section;
            auto* header = new QTreeWidgetItem(tree_, {section});
            QFont f = header->font(0);
            f.setBold(true);
            header->setFont(0, f);
            header->setFirstColumnSpanned(true);
        }
        auto* item = new QTreeWidgetItem(tree_, {QStringLiteral("  ") + row.name, row.value});
        item->setToolTip(0, row.help);
        item->setToolTip(1, row.value);
    }
    fitColumns(tree_);
}

}  // namespace ramiel::studio
