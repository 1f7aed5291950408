// The graph as a QGraphicsScene: built from a GraphLayout, recolored from an
// PlannedModel. Owns no algorithm; it only draws what the session computed.
#pragma once

#include "graph_items.h"
#include "palette.h"
#include "studio_session.h"

#include <QGraphicsScene>
#include <QList>
#include <QPair>

#include <memory>
#include <vector>

namespace ramiel::studio {

enum class ColorMode { Cluster, OpType, Time };

class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(QObject* parent = nullptr);

    void setGraph(std::shared_ptr<const PreparedModel> prepared, std::shared_ptr<const GraphLayout> layout);
    void setAnalysis(std::shared_ptr<const PlannedModel> analysis);
    void setColorMode(ColorMode mode);
    void setShowCriticalPath(bool show);
    void setShowShapes(bool show);
    // The canvas's colors: the light or the dark theme (the view follows its palette).
    void setDark(bool dark);
    const SceneTheme& theme() const { return *theme_; }
    // With hyperclustering (d > 1): which graph copy's clusters to show.
    void setCopy(int copy);
    int copy() const { return copy_; }

    ColorMode colorMode() const { return mode_; }
    const std::vector<NodeItem*>& displayItems() const { return items_; }  // by display item index
    const std::vector<EdgeItem*>& edgeItems() const { return edges_; }
    NodeItem* itemOfNode(NodeId node) const;
    // The operator selected, or kNone.
    NodeId selectedNode() const;
    // The graph input or output selected, or kNone.
    ValueId selectedValue() const;
    void selectNode(NodeId node);
    // What "Copy Name" copies for an item: the operator's or the value's name
    // as in the file (an edge: the value it carries); empty for anything else.
    QString nameOf(const QGraphicsItem* item) const;
    // An operator's tooltip: type, name, output shapes, FLOPs, cost, cluster,
    // t-level and b-level (rich text).
    QString toolTipOf(NodeId node) const;
    std::shared_ptr<const GraphLayout> layout() const { return layout_; }
    std::shared_ptr<const PreparedModel> prepared() const { return prepared_; }
    // The graph drawn (the model's, or a body opened from it); nullptr when none.
    const Graph* graph() const { return prepared_ ? &prepared_->model.graph : nullptr; }
    // Lines ('\n' between them) the legend shows first (a body: why it has no schedule colors); empty: none.
    void setNote(const QString& note);
    QString note() const { return note_; }
    std::shared_ptr<const PlannedModel> analysis() const { return analysis_; }
    // Teaching mode: colors from `clusters` by node id (-1: not clustered yet,
    // drawn pale) with the nodes of `current` outlined, until cleared.
    void setTeachingOverlay(std::vector<int> clusters, std::vector<NodeId> current, QString caption = {});
    void clearTeachingOverlay();
    bool teachingOverlay() const { return !teachClusters_.empty(); }
    // One line of the legend: a caption beside a filled box (a node's color), a stroke (the
    // edges of a path) or nothing.
    struct LegendEntry {
        enum class Mark { None, Box, Stroke };
        Mark mark;
        QColor color;
        QString text;
    };
    // The legend of the current color mode.
    QList<LegendEntry> legend() const;
    // The legend drawn in `font`: its size, and the legend painted into `box`
    // (the view draws it over the canvas, the exports beside the graph).
    QSize legendSize(const QFont& font) const;
    void paintLegend(QPainter* painter, const QRect& box, const QFont& font) const;

Q_SIGNALS:
    void nodeSelected(ramiel::NodeId node);  // kNone when the selection is cleared
    void valueSelected(ramiel::ValueId value);  // a graph input or output was clicked
    void legendChanged();

private:
    // The box selected (operator, input or output), or null.
    const DisplayItem* selectedDisplayItem() const;
    void recolor();
    void recolorTeaching();
    void recolorGroup(NodeItem* item, int group, const PlannedModel* analysis, size_t copy, double maxSeconds);

    std::shared_ptr<const PreparedModel> prepared_;
    std::shared_ptr<const GraphLayout> layout_;
    std::shared_ptr<const PlannedModel> analysis_;
    std::vector<NodeItem*> items_;
    std::vector<EdgeItem*> edges_;
    ColorMode mode_ = ColorMode::Cluster;
    bool showCritical_ = true;
    bool showShapes_ = false;
    int copy_ = 0;
    std::vector<int> teachClusters_;
    std::vector<NodeId> teachCurrent_;
    QString teachCaption_;
    QString note_;
    const SceneTheme* theme_ = &sceneTheme(false);
};

}  // namespace ramiel::studio
