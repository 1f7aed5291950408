// Find by node name or operator type (Ctrl+F), with next and previous.
#pragma once

#include "core/ir/graph.h"

#include <QWidget>

#include <vector>

class QLineEdit;
class QLabel;

namespace ramiel::studio {

class FindBar : public QWidget {
    Q_OBJECT
public:
    explicit FindBar(QWidget* parent = nullptr);
    void setGraph(const Graph* graph);
    void activate();
    QLineEdit* edit() const { return edit_; }
    const std::vector<NodeId>& matches() const { return matches_; }

public Q_SLOTS:
    void next();
    void previous();

Q_SIGNALS:
    void nodeFound(ramiel::NodeId node);

protected:
    void keyPressEvent(QKeyEvent* event) override;

private:
    void search();
    void show(int index);

    QLineEdit* edit_;
    QLabel* count_;
    const Graph* graph_ = nullptr;
    std::vector<NodeId> matches_;
    int current_ = -1;
};

}  // namespace ramiel::studio
