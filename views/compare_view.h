// Two schedules of the same model side by side (e.g. linear vs HEFT, or
// d = 1 vs d = 4): two graph views with synchronized zoom, scrolling and
// selection, and the metrics of both in one table.
#pragma once

#include "studio_session.h"

#include <QWidget>

#include <array>
#include <memory>

class QComboBox;
class QSpinBox;
class QTreeWidget;

namespace ramiel::studio {

class GraphScene;
class GraphView;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(StudioSession* session, QWidget* parent = nullptr);

    GraphScene* scene(int side) const { return sides_[size_t(side)].scene; }
    GraphView* view(int side) const { return sides_[size_t(side)].view; }
    QComboBox* algorithmBox(int side) const { return sides_[size_t(side)].algorithm; }
    QSpinBox* degreeBox(int side) const { return sides_[size_t(side)].degree; }
    std::shared_ptr<const PlannedModel> analysis(int side) const { return sides_[size_t(side)].analysis; }
    QTreeWidget* table() const { return table_; }

Q_SIGNALS:
    void updated();  // both sides scheduled and drawn

protected:
    void showEvent(QShowEvent* event) override;

private:
    struct Side {
        GraphScene* scene = nullptr;
        GraphView* view = nullptr;
        QComboBox* algorithm = nullptr;
        QSpinBox* degree = nullptr;
        std::shared_ptr<const PlannedModel> analysis;
        int generation = 0;
    };
    void rebuildScenes();
    void reschedule(int side);
    void fillTable();
    PlanSettings settingsOf(int side) const;

    StudioSession* session_;
    std::array<Side, 2> sides_;
    QTreeWidget* table_;
    bool syncing_ = false;
    bool stale_ = true;  // the scenes lag the model until the view is shown
};

}  // namespace ramiel::studio
