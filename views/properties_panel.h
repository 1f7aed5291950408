// Everything about the selected node: operator, attributes, inputs and
// outputs with shapes, costs, cluster, t-level and b-level. A constant input
// (a weight) clicked in the list is inspected below it: statistics and a
// histogram.
#pragma once

#include "core/ir/graph.h"

#include <QWidget>

#include <memory>

class QTreeWidget;
class QTreeWidgetItem;

namespace ramiel::pipeline {
struct PlannedModel;
}

namespace ramiel::studio {

using pipeline::PlannedModel;
class InitializerView;


class PropertiesPanel : public QWidget {
    Q_OBJECT
public:
    explicit PropertiesPanel(QWidget* parent = nullptr);
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis);
    void showNode(NodeId node);
    // A value instead of a node: a graph input or output (clicked in the graph).
    void showValue(ValueId value);
    NodeId node() const { return node_; }
    ValueId value() const { return value_; }
    QTreeWidget* tree() const { return tree_; }
    InitializerView* initializerView() const { return initializer_; }
    // The row of the list that stands for `value` (an input or output of the node), or nullptr.
    QTreeWidgetItem* rowOf(ValueId value) const;

protected:
    void changeEvent(QEvent* event) override;  // the hint's color follows the palette

private:
    void rebuild();
    void rebuildValue();

    QTreeWidget* tree_;
    InitializerView* initializer_;
    std::shared_ptr<const PlannedModel> analysis_;
    NodeId node_ = kNone;
    ValueId value_ = kNone;
};

}  // namespace ramiel::studio
