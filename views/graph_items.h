// The scene's items: an operator box (or an input/output terminal) and an
// edge drawn along its Graphviz spline. Items hold only their look; the
// scene decides colors from the analysis.
#pragma once

#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QList>
#include <QPair>
#include <QString>

namespace ramiel::studio {

// Widths of a box's labels in the scene's fonts (what Graphviz sizes boxes with).
qreal titleTextWidth(const QString& text, bool bold);
qreal subtitleTextWidth(const QString& text);

class NodeItem : public QGraphicsItem {
public:
    enum class Shape { Operator, Terminal, Group };
    NodeItem(int index, Shape shape, QSizeF size, QString title, QString subtitle);

    int index() const { return index_; }
    bool isTerminal() const { return shape_ == Shape::Terminal; }
    bool isGroup() const { return shape_ == Shape::Group; }
    // A collapsed module holding nodes of several clusters: a band of each
    // color, widths by share of nodes (shares sum to 1); empty: the fill.
    void setBands(QList<QPair<QColor, double>> bands);
    const QList<QPair<QColor, double>>& bands() const { return bands_; }
    void setFill(const QColor& fill);
    QColor fill() const { return fill_; }
    void setCritical(bool critical);
    bool critical() const { return critical_; }
    void setCloneCount(int clones);
    // The labels as drawn: elided when the box is too narrow for them.
    QString shownTitle() const { return shownTitle_; }
    QString shownSubtitle() const { return shownSubtitle_; }

    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int index_;
    Shape shape_;
    QRectF rect_;
    QString title_;
    QString subtitle_;
    QString shownTitle_;     // elided to the box
    QString shownSubtitle_;
    QColor fill_ = QColor(0xee, 0xee, 0xee);
    bool critical_ = false;
    int clones_ = 0;
    QList<QPair<QColor, double>> bands_;
};

class EdgeItem : public QGraphicsPathItem {
public:
    enum class Style { Normal, CrossCluster, Critical };
    EdgeItem(int index, const QPainterPath& path, const QPolygonF& arrow, QString label);

    int index() const { return index_; }
    void setStyle(Style style, const QColor& color);
    Style style() const { return style_; }
    void setLabelVisible(bool visible);

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int index_;
    QPolygonF arrow_;
    QString label_;
    QPointF labelAt_;
    bool labelVisible_ = false;
    Style style_ = Style::Normal;
    QColor color_;
};

}  // namespace ramiel::studio
