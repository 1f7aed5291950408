#include "graph_items.h"

#include "graph_scene.h"
#include "palette.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QPainterPath>
#include <QStyleOptionGraphicsItem>

#include <algorithm>

namespace ramiel::studio {
namespace {

// Below this scale text is unreadable: draw plain boxes (densenet121 pans smoothly).
constexpr qreal kTextDetail = 0.45;

QFont sceneFont(bool bold)
{
    QFont f;
    f.setPointSizeF(8.5);
    f.setBold(bold);
    return f;
}

QFont smallFont()
{
    QFont f = sceneFont(false);
    f.setPointSizeF(7.5);
    return f;
}

const SceneTheme& themeOf(const QGraphicsItem* item)
{
    const auto* scene = qobject_cast<const GraphScene*>(item->scene());
    return scene ? scene->theme() : sceneTheme(false);
}

}  // namespace

qreal titleTextWidth(const QString& text, bool bold) { return QFontMetricsF(sceneFont(bold)).horizontalAdvance(text); }

qreal subtitleTextWidth(const QString& text) { return QFontMetricsF(smallFont()).horizontalAdvance(text); }

NodeItem::NodeItem(int index, Shape shape, QSizeF size, QString title, QString subtitle)
    : index_(index), shape_(shape), rect_(-size.width() / 2, -size.height() / 2, size.width(), size.height()),
      title_(std::move(title)), subtitle_(std::move(subtitle))
{
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setZValue(1);
    if (shape_ == Shape::Terminal)
        fill_ = sceneTheme(false).terminalFill;
    // Text wider than the box is elided (names keep their ends: ".../conv1/Conv").
    const qreal room = rect_.width() - (shape_ == Shape::Terminal ? rect_.height() * 0.6 : 0) - 10;
    shownTitle_ = QFontMetricsF(sceneFont(shape_ != Shape::Terminal)).elidedText(title_, Qt::ElideRight, room);
    shownSubtitle_ = QFontMetricsF(smallFont()).elidedText(subtitle_, Qt::ElideMiddle, room);
}

void NodeItem::setFill(const QColor& fill)
{
    if (fill != fill_) {
        fill_ = fill;
        update();
    }
}

void NodeItem::setBands(QList<QPair<QColor, double>> bands)
{
    if (bands != bands_) {
        bands_ = std::move(bands);
        update();
    }
}

void NodeItem::setCritical(bool critical)
{
    if (critical != critical_) {
        critical_ = critical;
        update();
    }
}

void NodeItem::setCloneCount(int clones)
{
    if (clones != clones_) {
        clones_ = clones;
        update();
    }
}

QRectF NodeItem::boundingRect() const { return rect_.adjusted(-5, -9, 9, 5); }

QPainterPath NodeItem::shape() const
{
    QPainterPath p;
    p.addRect(rect_);
    return p;
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*)
{
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const QColor fill = fill_;
    const bool selected = isSelected();
    const SceneTheme& theme = themeOf(this);
    QPen pen(critical_ ? theme.criticalOutline : theme.outline, critical_ ? 2.6 : 0.8);
    if (selected)
        pen = QPen(QColor(0x00, 0x78, 0xd7), 3.2);
    if (lod < kTextDetail) {
        painter->setPen(critical_ || selected ? pen : Qt::NoPen);
        painter->setBrush(fill);
        painter->drawRect(rect_);
        return;
    }
    painter->setPen(pen);
    painter->setBrush(fill);
    if (shape_ == Shape::Terminal) {
        painter->drawRoundedRect(rect_, rect_.height() / 2, rect_.height() / 2);
    } else if (shape_ == Shape::Group) {
        // A module: a block with a second outline, banded by the clusters inside.
        QPainterPath outline;
        outline.addRoundedRect(rect_, 6, 6);
        painter->fillPath(outline, fill);
        if (bands_.size() > 1) {
            // A strip along the bottom: each cluster's share of the module's nodes.
            painter->save();
            painter->setClipPath(outline);
            const qreal h = std::min<qreal>(8, rect_.height() / 4);
            qreal x = rect_.left();
            for (const auto& [color, share] : bands_) {
                const qreal w = rect_.width() * share;
                painter->fillRect(QRectF(x, rect_.bottom() - h, w + 0.5, h), color);
                x += w;
            }
            painter->restore();
        }
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(outline);
        QPen inner(pen.color(), 0.8);
        painter->setPen(inner);
        painter->drawRoundedRect(rect_.adjusted(3, 3, -3, -3), 4, 4);
    } else {
        painter->drawRoundedRect(rect_, 4, 4);
    }

    painter->setPen(textColorOn(fill));
    // A module's text stays above its strip of cluster bands.
    const QRectF body = shape_ == Shape::Group ? rect_.adjusted(0, 2, 0, -6) : rect_;
    if (subtitle_.isEmpty()) {
        painter->setFont(sceneFont(shape_ != Shape::Terminal));
        painter->drawText(body, Qt::AlignCenter, shownTitle_);
    } else {
        const QRectF top(body.left(), body.top() + 3, body.width(), body.height() / 2 - 2);
        const QRectF bottom(body.left(), body.center().y(), body.width(), body.height() / 2 - 3);
        painter->setFont(sceneFont(shape_ != Shape::Terminal));
        painter->drawText(top, Qt::AlignCenter, shownTitle_);
        painter->setFont(smallFont());
        painter->drawText(bottom, Qt::AlignCenter, shownSubtitle_);
    }
    if (clones_ > 0) {
        // A badge: this node also runs, cloned, in `clones_` other clusters.
        const QRectF badge(rect_.right() - 6, rect_.top() - 8, 14, 14);
        painter->setPen(QPen(Qt::black, 0.8));
        painter->setBrush(QColor(0xff, 0xff, 0xff));
        painter->drawEllipse(badge);
        QFont f = sceneFont(true);
        f.setPointSizeF(6.5);
        painter->setFont(f);
        painter->drawText(badge, Qt::AlignCenter, QStringLiteral("+%1").arg(clones_));
    }
}

EdgeItem::EdgeItem(int index, const QPainterPath& path, const QPolygonF& arrow, QString label)
    : QGraphicsPathItem(path), index_(index), arrow_(arrow), label_(std::move(label))
{
    labelAt_ = path.pointAtPercent(0.5);
    setZValue(0);
    setStyle(Style::Normal, sceneTheme(false).edge);
}

void EdgeItem::setStyle(Style style, const QColor& color)
{
    style_ = style;
    color_ = color;
    QPen pen(color, style == Style::Critical ? 3.4 : 1.1);
    if (style == Style::CrossCluster) {
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.5);
    }
    pen.setCapStyle(Qt::FlatCap);
    setPen(pen);
    setZValue(style == Style::Critical ? 0.5 : 0);
    update();
}

void EdgeItem::setLabelVisible(bool visible)
{
    if (visible != labelVisible_) {
        prepareGeometryChange();
        labelVisible_ = visible;
    }
}

QRectF EdgeItem::boundingRect() const
{
    QRectF r = QGraphicsPathItem::boundingRect().united(arrow_.boundingRect()).adjusted(-2, -2, 2, 2);
    if (labelVisible_)
        r = r.united(QRectF(labelAt_.x() + 3, labelAt_.y() - 8, 8 + 5.5 * label_.size(), 14));
    return r;
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget)
{
    QGraphicsPathItem::paint(painter, option, widget);
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    if (!arrow_.isEmpty() && lod >= kTextDetail / 2) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(color_);
        painter->drawPolygon(arrow_);
    }
    if (labelVisible_ && lod >= kTextDetail && !label_.isEmpty()) {
        QFont f;
        f.setPointSizeF(7);
        painter->setFont(f);
        painter->setPen(themeOf(this).edgeLabel);
        painter->drawText(labelAt_ + QPointF(4, 3), label_);
    }
}

}  // namespace ramiel::studio
