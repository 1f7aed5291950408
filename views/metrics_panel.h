// The metrics of the current schedule as a table, with the measured run
// figures added once a run has happened.
#pragma once

#include <QWidget>

#include <memory>

class QTreeWidget;

namespace ramiel::pipeline {
struct PlannedModel;
}

namespace ramiel::studio {

using pipeline::PlannedModel;


class MetricsPanel : public QWidget {
    Q_OBJECT
public:
    explicit MetricsPanel(QWidget* parent = nullptr);
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis);
    // Rows under "Run (measured)"; empty clears them.
    void setRunFigures(const QList<QPair<QString, QString>>& figures);
    QTreeWidget* tree() const { return tree_; }

private:
    void rebuild();

    QTreeWidget* tree_;
    std::shared_ptr<const PlannedModel> analysis_;
    QList<QPair<QString, QString>> run_;
};

}  // namespace ramiel::studio
