// A view on a GraphScene: wheel zoom under the cursor, drag to pan, fit and
// 100%, a minimap in the corner and the color legend drawn over the view.
#pragma once

#include "core/ir/graph.h"

#include <QGraphicsView>

#include <vector>

class QMenu;

namespace ramiel::studio {

class GraphScene;
class Minimap;

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(GraphScene* scene, QWidget* parent = nullptr);

    GraphScene* graphScene() const { return scene_; }
    double zoom() const;
    void setMinimapVisible(bool visible);
    void setLegendVisible(bool visible);
    bool legendVisible() const { return legendVisible_; }
    // Where the legend is drawn, in viewport coordinates (empty when hidden):
    // the first corner (top left, top right, bottom left, bottom right) where
    // it covers no box, else where it covers the fewest, the graph's inputs
    // and outputs counting most; it stays put while its corner stays free.
    QRect legendRect() const { return legendRect_; }
    // The context menu for an item of the scene (a box, a terminal, an edge;
    // nullptr: the canvas): Copy Name, and what applies to it.
    QMenu* contextMenuFor(QGraphicsItem* item, QWidget* parent);
    // Whether the menu offers Collapse/Expand Module (not inside a body: modules are the model's).
    void setModulesEnabled(bool enabled) { modulesEnabled_ = enabled; }

public Q_SLOTS:
    void zoomIn();
    void zoomOut();
    void fitToWindow();
    // Fits when the text stays readable, else 75% from the top (how a graph opens).
    void showReadable();
    void actualSize();
    void setZoom(double factor);
    void centerOnNode(int node);
    // Brings `nodes` into view (Teaching's step): nothing when all are visible;
    // else zooms out to fit them (never in, nor below 40 % unless already
    // there) and centres on them, on their start when they still do not fit.
    void showNodes(const std::vector<ramiel::NodeId>& nodes);

Q_SIGNALS:
    void zoomChanged(double factor);
    void scrolled();
    // A local file was dropped on the canvas (the window opens it).
    void fileDropped(const QString& path);
    // From the context menu: draw a module (a node-name prefix) as one box, or its nodes again.
    void collapseRequested(const QString& module);
    void expandRequested(const QString& module);
    // Open a subgraph (If/Loop/Scan body) of `node`: attribute `attribute`, graph `index` in it.
    void bodyRequested(int node, const QString& attribute, int index);

protected:
    void wheelEvent(QWheelEvent* event) override;
    // The scene takes no drops: a file dropped anywhere on the canvas opens.
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    void drawForeground(QPainter* painter, const QRectF& rect) override;
    void keyPressEvent(QKeyEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;
    // On an operator with subgraphs: opens its first body.
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    // A palette change (View > Dark Theme) recolors the canvas, the legend and the minimap.
    void changeEvent(QEvent* event) override;

private:
    void scaleBy(double factor);
    void placeMinimap();
    void placeLegend();
    QSize legendSize() const;
    QFont legendFont() const;
    // The scene's rectangle with room for the legend before the graph's first
    // rank (above it top-down, left of it left to right), at the current zoom.
    void reserveLegendRoom();

    GraphScene* scene_;
    Minimap* minimap_;
    bool legendVisible_ = true;
    bool modulesEnabled_ = true;
    QRect legendRect_;
    Qt::Corner legendCorner_ = Qt::TopLeftCorner;
};

// A thumbnail of the whole scene, rendered once per change into a pixmap (so
// panning a large graph does not redraw it twice); the visible part is
// outlined; click or drag to move there.
class Minimap : public QWidget {
    Q_OBJECT
public:
    Minimap(GraphView* main, QWidget* parent);
    // Re-renders the thumbnail once control returns to the event loop
    // (several changes in a row cost one render).
    void refresh();

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    QRectF target() const;  // where the scene is drawn, in widget coordinates
    void render();
    void moveMainTo(QPointF widgetPoint);

    GraphView* main_;
    QPixmap pixmap_;
    bool pending_ = false;
};

}  // namespace ramiel::studio
