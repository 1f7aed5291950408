#include "graph_view.h"

#include "graph_items.h"
#include "graph_scene.h"
#include "palette.h"

#include "core/analysis/grouping.h"

#include <QClipboard>
#include <QContextMenuEvent>
#include <QDragEnterEvent>
#include <QGuiApplication>
#include <QMenu>
#include <QDropEvent>
#include <QKeyEvent>
#include <QMimeData>
#include <QPainter>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <vector>

namespace ramiel::studio {
namespace {
constexpr double kMinZoom = 0.02;
constexpr double kMaxZoom = 8.0;
constexpr double kSceneMargin = 40;  // GraphScene's margin around the layout
}  // namespace

GraphView::GraphView(GraphScene* scene, QWidget* parent) : QGraphicsView(scene, parent), scene_(scene)
{
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setViewportUpdateMode(QGraphicsView::MinimalViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setFocusPolicy(Qt::StrongFocus);
    minimap_ = new Minimap(this, this);
    scene_->setDark(isDark(palette()));
    connect(scene_, &QGraphicsScene::sceneRectChanged, this, &GraphView::reserveLegendRoom);
    connect(scene_, &GraphScene::legendChanged, this, &GraphView::reserveLegendRoom);
    connect(scene_, &GraphScene::legendChanged, this, &GraphView::placeLegend);
    connect(scene_, &GraphScene::legendChanged, viewport(), qOverload<>(&QWidget::update));
    connect(scene_, &QGraphicsScene::sceneRectChanged, this, [this] { minimap_->refresh(); });
    connect(scene_, &GraphScene::legendChanged, this, [this] { minimap_->refresh(); });
}

double GraphView::zoom() const { return transform().m11(); }

void GraphView::setMinimapVisible(bool visible)
{
    minimap_->setVisible(visible);
    placeLegend();
}

void GraphView::setLegendVisible(bool visible)
{
    legendVisible_ = visible;
    reserveLegendRoom();
    placeLegend();
    viewport()->update();
}

void GraphView::scaleBy(double factor)
{
    const double target = std::clamp(zoom() * factor, kMinZoom, kMaxZoom);
    factor = target / zoom();
    if (std::abs(factor - 1) < 1e-9)
        return;
    scale(factor, factor);
    reserveLegendRoom();
    minimap_->update();
    placeLegend();
    Q_EMIT zoomChanged(zoom());
}

void GraphView::setZoom(double factor)
{
    if (std::abs(factor - zoom()) < 1e-9)
        return;
    const ViewportAnchor anchor = transformationAnchor();
    setTransformationAnchor(QGraphicsView::AnchorViewCenter);
    scaleBy(factor / zoom());
    setTransformationAnchor(anchor);
}

void GraphView::zoomIn()
{
    const ViewportAnchor anchor = transformationAnchor();
    setTransformationAnchor(QGraphicsView::AnchorViewCenter);
    scaleBy(1.25);
    setTransformationAnchor(anchor);
}

void GraphView::zoomOut()
{
    const ViewportAnchor anchor = transformationAnchor();
    setTransformationAnchor(QGraphicsView::AnchorViewCenter);
    scaleBy(0.8);
    setTransformationAnchor(anchor);
}

void GraphView::fitToWindow()
{
    if (scene_->sceneRect().isEmpty())
        return;
    // Twice: the legend's room depends on the zoom the fit gives.
    for (int k = 0; k < 2; ++k) {
        reserveLegendRoom();
        fitInView(sceneRect(), Qt::KeepAspectRatio);
    }
    reserveLegendRoom();
    minimap_->update();
    placeLegend();
    Q_EMIT zoomChanged(zoom());
}

void GraphView::showReadable()
{
    if (scene_->sceneRect().isEmpty())
        return;
    // The whole graph if it is readable that way; else readable size, from the top.
    const QRectF graph = scene_->sceneRect();
    const double fit = std::min(viewport()->width() / graph.width(), viewport()->height() / graph.height());
    const double z = std::clamp(fit, 0.75, 1.0);
    resetTransform();
    scale(z, z);
    reserveLegendRoom();
    const QRectF r = sceneRect();  // with the legend's room
    if (fit >= 0.75 && r.width() * z <= viewport()->width() && r.height() * z <= viewport()->height()) {
        centerOn(r.center());
    } else {
        // Start where the data enters: the first graph input (or the first box).
        const auto& items = scene_->displayItems();
        const QPointF entry = items.empty() ? r.center() : items.front()->pos();
        const bool leftToRight = scene_->layout() && scene_->layout()->leftToRight;
        if (leftToRight)
            centerOn(r.left() + viewport()->width() / (2 * z), entry.y());
        else
            centerOn(entry.x(), r.top() + viewport()->height() / (2 * z));
    }
    minimap_->update();
    placeLegend();
    Q_EMIT zoomChanged(zoom());
}

void GraphView::reserveLegendRoom()
{
    QRectF r = scene_->sceneRect();
    const QSize legend = legendVisible_ && !r.isEmpty() ? legendSize() : QSize();
    if (!legend.isEmpty() && zoom() > 0) {
        // The legend sits 8 pixels in from the edge and wants 8 more before the graph; the
        // scene's own margin (40 units) counts towards that.
        auto room = [&](int extent) { return std::max(0.0, extent + 16 - kSceneMargin * zoom()) / zoom(); };
        if (scene_->layout() && scene_->layout()->leftToRight)
            r.adjust(-room(legend.width()), 0, 0, 0);
        else
            r.adjust(0, -room(legend.height()), 0, 0);
    }
    if (r == sceneRect())
        return;
    // A view showing the graph's start keeps showing it, now with the legend's room.
    const bool leftToRight = scene_->layout() && scene_->layout()->leftToRight;
    QScrollBar* bar = leftToRight ? horizontalScrollBar() : verticalScrollBar();
    // (within the scene's margin of it: a resize around the view's center moves it a little)
    const bool atStart = bar->value() <= bar->minimum() + int(kSceneMargin * zoom());
    setSceneRect(r);
    if (atStart)
        bar->setValue(bar->minimum());
}

void GraphView::actualSize()
{
    setZoom(1.0);
}

void GraphView::centerOnNode(int node)
{
    if (NodeItem* item = scene_->itemOfNode(node)) {
        if (zoom() < 0.6)
            setZoom(1.0);
        centerOn(item);
    }
}

void GraphView::showNodes(const std::vector<NodeId>& nodes)
{
    QRectF r;
    for (NodeId n : nodes)
        if (NodeItem* item = scene_->itemOfNode(n))
            r |= item->sceneBoundingRect();
    if (r.isEmpty())
        return;
    r.adjust(-30, -30, 30, 30);
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    if (visible.contains(r))
        return;
    const double fit = std::min(viewport()->width() / r.width(), viewport()->height() / r.height());
    setZoom(std::min(zoom(), std::max(fit, 0.4)));
    const double z = zoom();
    const double halfW = viewport()->width() / (2 * z);
    const double halfH = viewport()->height() / (2 * z);
    // Where the nodes start (their first rank) when they are longer than the view.
    const bool leftToRight = scene_->layout() && scene_->layout()->leftToRight;
    QPointF c = r.center();
    if (leftToRight && r.width() > 2 * halfW)
        c.setX(r.left() + halfW);
    if (!leftToRight && r.height() > 2 * halfH)
        c.setY(r.top() + halfH);
    centerOn(c);
    minimap_->update();
    placeLegend();
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event)
{
    auto* item = dynamic_cast<NodeItem*>(itemAt(event->pos()));
    if (item && scene_->layout() && scene_->graph()) {
        const DisplayItem& di = scene_->layout()->display.items[size_t(item->index())];
        if (di.kind == DisplayItem::Kind::Operator) {
            const std::vector<SubgraphRef> bodies = subgraphsOf(scene_->graph()->node(di.node));
            if (!bodies.empty()) {
                Q_EMIT bodyRequested(di.node, QString::fromStdString(bodies.front().attribute), bodies.front().index);
                event->accept();
                return;
            }
        }
    }
    QGraphicsView::mouseDoubleClickEvent(event);
}

namespace {

QString droppedFile(const QMimeData* data)
{
    if (!data || !data->hasUrls() || data->urls().isEmpty() || !data->urls().first().isLocalFile())
        return {};
    return data->urls().first().toLocalFile();
}

}  // namespace

void GraphView::dragEnterEvent(QDragEnterEvent* event)
{
    if (droppedFile(event->mimeData()).isEmpty())
        return QGraphicsView::dragEnterEvent(event);
    event->acceptProposedAction();
}

void GraphView::dragMoveEvent(QDragMoveEvent* event)
{
    if (droppedFile(event->mimeData()).isEmpty())
        return QGraphicsView::dragMoveEvent(event);
    event->acceptProposedAction();
}

void GraphView::dropEvent(QDropEvent* event)
{
    const QString path = droppedFile(event->mimeData());
    if (path.isEmpty())
        return QGraphicsView::dropEvent(event);
    event->acceptProposedAction();
    Q_EMIT fileDropped(path);
}

void GraphView::wheelEvent(QWheelEvent* event)
{
    if (event->modifiers() & (Qt::ShiftModifier | Qt::AltModifier)) {
        QGraphicsView::wheelEvent(event);  // scroll
        return;
    }
    const double steps = event->angleDelta().y() / 120.0;
    if (steps != 0)
        scaleBy(std::pow(1.15, steps));
    event->accept();
}

void GraphView::keyPressEvent(QKeyEvent* event)
{
    if (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Equal)
        zoomIn();
    else if (event->key() == Qt::Key_Minus)
        zoomOut();
    else
        QGraphicsView::keyPressEvent(event);
}

void GraphView::changeEvent(QEvent* event)
{
    QGraphicsView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        scene_->setDark(isDark(palette()));
        minimap_->refresh();
        viewport()->update();
    }
}

QMenu* GraphView::contextMenuFor(QGraphicsItem* item, QWidget* parent)
{
    auto* menu = new QMenu(parent);
    const QString name = scene_->nameOf(item);
    if (!name.isEmpty()) {
        const bool isEdge = dynamic_cast<EdgeItem*>(item) != nullptr;
        QAction* copy = menu->addAction(isEdge ? tr("Copy Value Name") : tr("Copy Name"), menu,
                                        [name] { QGuiApplication::clipboard()->setText(name); });
        copy->setObjectName(QStringLiteral("copyName"));
        copy->setToolTip(name);
        menu->addSeparator();
    }
    // Modules: the ones around a box to collapse, a collapsed one to expand.
    if (auto* node = dynamic_cast<NodeItem*>(item); node && scene_->layout()) {
        const DisplayItem& di = scene_->layout()->display.items[size_t(node->index())];
        if (di.kind == DisplayItem::Kind::Group && modulesEnabled_) {
            QAction* expand = menu->addAction(tr("Expand Module %1").arg(name), this,
                                              [this, name] { Q_EMIT expandRequested(name); });
            expand->setObjectName(QStringLiteral("expandModule"));
        } else if (di.kind == DisplayItem::Kind::Operator) {
            // Bodies of If/Loop/Scan: one entry each ("Open Body 'then_branch'").
            for (const SubgraphRef& body : subgraphsOf(scene_->graph()->node(di.node))) {
                const QString attribute = QString::fromStdString(body.attribute);
                const int index = body.index;
                QAction* open = menu->addAction(
                    body.count > 1 ? tr("Open Body '%1' [%2]").arg(attribute).arg(index) : tr("Open Body '%1'").arg(attribute),
                    this, [this, node = di.node, attribute, index] { Q_EMIT bodyRequested(node, attribute, index); });
                open->setObjectName(QStringLiteral("openBody"));
            }
            const std::vector<std::string> modules =
                modulesEnabled_ ? modulePrefixes(name.toStdString()) : std::vector<std::string>();
            if (!modules.empty()) {
                QMenu* collapse = menu->addMenu(tr("Collapse Module"));
                collapse->setObjectName(QStringLiteral("collapseModule"));
                for (const std::string& m : modules) {
                    const QString module = QString::fromStdString(m);
                    collapse->addAction(module, this, [this, module] { Q_EMIT collapseRequested(module); });
                }
            }
        }
        menu->addSeparator();
    }
    menu->addAction(tr("Fit to Window"), this, &GraphView::fitToWindow);
    return menu;
}

void GraphView::contextMenuEvent(QContextMenuEvent* event)
{
    QMenu* menu = contextMenuFor(itemAt(event->pos()), this);
    menu->setAttribute(Qt::WA_DeleteOnClose);
    menu->popup(event->globalPos());
    event->accept();
}

void GraphView::resizeEvent(QResizeEvent* event)
{
    QGraphicsView::resizeEvent(event);
    placeMinimap();
    placeLegend();
}

void GraphView::scrollContentsBy(int dx, int dy)
{
    QGraphicsView::scrollContentsBy(dx, dy);
    // The legend stays where it is on screen: repaint it and where the scroll carried its pixels.
    if (!legendRect_.isEmpty())
        viewport()->update(QRegion(legendRect_) + QRegion(legendRect_.translated(dx, dy)));
    minimap_->update();
    placeLegend();
    Q_EMIT scrolled();
}

void GraphView::placeMinimap()
{
    const int w = std::clamp(viewport()->width() / 5, 120, 220);
    const int h = std::clamp(viewport()->height() / 3, 120, 260);
    minimap_->setGeometry(viewport()->width() - w - 8, viewport()->height() - h - 8, w, h);
    minimap_->refresh();
}

QFont GraphView::legendFont() const
{
    QFont f = font();
    f.setPointSizeF(std::max(8.0, f.pointSizeF() - 1));
    return f;
}

QSize GraphView::legendSize() const { return scene_->legendSize(legendFont()); }

void GraphView::placeLegend()
{
    const QSize size = legendVisible_ ? legendSize() : QSize();
    QRect placed;
    if (!size.isEmpty()) {
        const QRect area = viewport()->rect().adjusted(8, 8, -8, -8);
        auto rectAt = [&](Qt::Corner corner) {
            QRect r(QPoint(0, 0), size);
            switch (corner) {
            case Qt::TopLeftCorner: r.moveTopLeft(area.topLeft()); break;
            case Qt::TopRightCorner: r.moveTopRight(area.topRight()); break;
            case Qt::BottomLeftCorner: r.moveBottomLeft(area.bottomLeft()); break;
            case Qt::BottomRightCorner: r.moveBottomRight(area.bottomRight()); break;
            }
            return r;
        };
        // How much of the graph a legend there would hide: boxes count 1, inputs and outputs 100.
        auto covered = [&](const QRect& r) {
            int cost = 0;
            for (QGraphicsItem* item : items(r, Qt::IntersectsItemShape))
                if (auto* node = dynamic_cast<NodeItem*>(item))
                    cost += node->isTerminal() ? 100 : 1;
            return cost;
        };
        std::vector<Qt::Corner> corners = {Qt::TopLeftCorner, Qt::TopRightCorner, Qt::BottomLeftCorner};
        if (!minimap_->isVisible())
            corners.push_back(Qt::BottomRightCorner);
        int best = -1;
        Qt::Corner chosen = legendCorner_;
        if (std::find(corners.begin(), corners.end(), legendCorner_) != corners.end() &&
            covered(rectAt(legendCorner_)) == 0) {
            best = 0;
        } else {
            for (Qt::Corner c : corners) {
                const int cost = covered(rectAt(c));
                if (best < 0 || cost < best) {
                    best = cost;
                    chosen = c;
                }
                if (cost == 0)
                    break;
            }
        }
        legendCorner_ = chosen;
        placed = rectAt(chosen);
    }
    if (placed != legendRect_) {
        viewport()->update(QRegion(legendRect_.adjusted(-1, -1, 1, 1)) + QRegion(placed.adjusted(-1, -1, 1, 1)));
        legendRect_ = placed;
    }
}

void GraphView::drawForeground(QPainter* painter, const QRectF&)
{
    if (!legendVisible_ || legendRect_.isEmpty())
        return;
    painter->save();
    painter->resetTransform();
    scene_->paintLegend(painter, legendRect_, legendFont());
    painter->restore();
}

Minimap::Minimap(GraphView* main, QWidget* parent) : QWidget(parent), main_(main)
{
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: click or drag to move the view"));
}

QRectF Minimap::target() const
{
    const QRectF scene = main_->scene()->sceneRect();
    if (scene.isEmpty())
        return {};
    const QRectF area = QRectF(rect()).adjusted(3, 3, -3, -3);
    const double s = std::min(area.width() / scene.width(), area.height() / scene.height());
    const QSizeF size(scene.width() * s, scene.height() * s);
    return QRectF(area.center() - QPointF(size.width() / 2, size.height() / 2), size);
}

void Minimap::refresh()
{
    if (pending_)
        return;
    pending_ = true;
    QTimer::singleShot(0, this, &Minimap::render);
}

void Minimap::render()
{
    pending_ = false;
    if (!isVisible())
        return;
    const QRectF t = target();
    if (t.isEmpty()) {
        pixmap_ = QPixmap();
        update();
        return;
    }
    const qreal dpr = devicePixelRatioF();
    pixmap_ = QPixmap((t.size() * dpr).toSize());
    pixmap_.setDevicePixelRatio(dpr);
    pixmap_.fill(main_->graphScene()->theme().background);
    QPainter p(&pixmap_);
    p.setRenderHint(QPainter::Antialiasing);
    main_->scene()->render(&p, QRectF(QPointF(0, 0), t.size()), main_->scene()->sceneRect());
    update();
}

void Minimap::resizeEvent(QResizeEvent*) { refresh(); }

void Minimap::showEvent(QShowEvent*) { refresh(); }

void Minimap::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    const SceneTheme& theme = main_->graphScene()->theme();
    p.fillRect(rect(), theme.panel);
    p.setPen(theme.panelBorder);
    p.drawRect(rect().adjusted(0, 0, -1, -1));
    const QRectF t = target();
    if (t.isEmpty())
        return;
    p.drawPixmap(t.topLeft(), pixmap_);
    const QRectF scene = main_->scene()->sceneRect();
    const QRectF visible = main_->mapToScene(main_->viewport()->rect()).boundingRect();
    const double s = t.width() / scene.width();
    QRectF r((visible.left() - scene.left()) * s + t.left(), (visible.top() - scene.top()) * s + t.top(),
             visible.width() * s, visible.height() * s);
    p.setPen(QPen(QColor(0x00, 0x78, 0xd7), 1.5));
    p.setBrush(QColor(0x00, 0x78, 0xd7, 40));
    p.drawRect(r.intersected(t.adjusted(-1, -1, 1, 1)));
}

void Minimap::moveMainTo(QPointF point)
{
    const QRectF t = target();
    if (t.isEmpty())
        return;
    const QRectF scene = main_->scene()->sceneRect();
    const double s = t.width() / scene.width();
    main_->centerOn(QPointF((point.x() - t.left()) / s + scene.left(), (point.y() - t.top()) / s + scene.top()));
    update();
}

void Minimap::mousePressEvent(QMouseEvent* event) { moveMainTo(event->position()); }

void Minimap::mouseMoveEvent(QMouseEvent* event)
{
    if (event->buttons() & Qt::LeftButton)
        moveMainTo(event->position());
}

}  // namespace ramiel::studio
