#include "graph_scene.h"

#include "metric_rows.h"
#include "palette.h"

#include "core/util/text.h"

#include <QFontMetrics>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ramiel::studio {
namespace {

QPainterPath splinePath(const LayoutEdge& e)
{
    QPainterPath path;
    if (e.spline.empty())
        return path;
    path.moveTo(e.spline[0].x, e.spline[0].y);
    for (size_t k = 1; k + 2 < e.spline.size(); k += 3)
        path.cubicTo(e.spline[k].x, e.spline[k].y, e.spline[k + 1].x, e.spline[k + 1].y, e.spline[k + 2].x,
                     e.spline[k + 2].y);
    return path;
}

QPolygonF arrowHead(const LayoutEdge& e)
{
    if (!e.hasArrow || e.spline.empty())
        return {};
    const QPointF tip(e.arrowTip.x, e.arrowTip.y);
    const QPointF base(e.spline.back().x, e.spline.back().y);
    QPointF d = tip - base;
    const double len = std::hypot(d.x(), d.y());
    if (len < 1e-6)
        return {};
    d /= len;
    const QPointF n(-d.y(), d.x());
    const QPointF back = tip - d * std::max(len, 7.0);
    return QPolygonF({tip, back + n * 3.5, back - n * 3.5});
}

// The time-color legend's steps in one unit, as a scale reads.
QString formatMs(double seconds) { return QString::number(seconds * 1e3, 'f', seconds < 1e-3 ? 3 : 2) + " ms"; }

}  // namespace

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent)
{
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    setBackgroundBrush(theme_->background);
    connect(this, &QGraphicsScene::selectionChanged, this, [this] {
        Q_EMIT nodeSelected(selectedNode());
        if (const ValueId v = selectedValue(); v != kNone)
            Q_EMIT valueSelected(v);
    });
}

void GraphScene::setGraph(std::shared_ptr<const PreparedModel> prepared, std::shared_ptr<const GraphLayout> layout)
{
    const QSignalBlocker block(this);
    clear();
    items_.clear();
    edges_.clear();
    prepared_ = std::move(prepared);
    layout_ = std::move(layout);
    analysis_.reset();
    teachClusters_.clear();
    teachCurrent_.clear();
    if (!prepared_ || !layout_)
        return;
    const DisplayGraph& d = layout_->display;
    const Layout& l = layout_->layout;
    const Graph& graph = prepared_->model.graph;
    items_.reserve(d.items.size());
    for (size_t i = 0; i < d.items.size(); ++i) {
        const DisplayItem& di = d.items[i];
        const NodeItem::Shape shape = di.kind == DisplayItem::Kind::Operator ? NodeItem::Shape::Operator
                                      : di.kind == DisplayItem::Kind::Group  ? NodeItem::Shape::Group
                                                                             : NodeItem::Shape::Terminal;
        auto* item = new NodeItem(int(i), shape,
                                  QSizeF(di.width, di.height), QString::fromStdString(di.title),
                                  QString::fromStdString(di.subtitle));
        item->setPos(l.centers[i].x, l.centers[i].y);
        // Operators get theirs from the analysis (recolor); inputs and outputs say what they are.
        if (di.kind == DisplayItem::Kind::Input || di.kind == DisplayItem::Kind::Output) {
            const Value& v = graph.value(di.value);
            item->setToolTip(QStringLiteral("<b>%1</b><br>%2<br>%3")
                                 .arg(v.isOuterScope ? tr("from the enclosing graph")
                                      : di.kind == DisplayItem::Kind::Input ? tr("graph input") : tr("graph output"),
                                      QString::fromStdString(printable(v.name)).toHtmlEscaped(),
                                      QString::fromStdString(v.type.toString()).toHtmlEscaped()));
        }
        addItem(item);
        items_.push_back(item);
    }
    edges_.reserve(d.edges.size());
    for (size_t i = 0; i < d.edges.size(); ++i) {
        const LayoutEdge& le = l.edges[i];
        const DisplayEdge& de = d.edges[i];
        QString label;
        if (de.value != kNone)
            label = QString::fromStdString(shapeText(graph.value(de.value).type));
        auto* edge = new EdgeItem(int(i), splinePath(le), arrowHead(le), label);
        edge->setLabelVisible(showShapes_);
        addItem(edge);
        edges_.push_back(edge);
    }
    // Arcs of long edges may reach beyond dot's bounding box.
    setSceneRect(itemsBoundingRect().united(QRectF(0, 0, l.width, l.height)).adjusted(-40, -40, 40, 40));
    recolor();
}

void GraphScene::setAnalysis(std::shared_ptr<const PlannedModel> analysis)
{
    analysis_ = std::move(analysis);
    recolor();
}

void GraphScene::setNote(const QString& note)
{
    note_ = note;
    Q_EMIT legendChanged();
}

void GraphScene::setColorMode(ColorMode mode)
{
    mode_ = mode;
    recolor();
}

void GraphScene::setShowCriticalPath(bool show)
{
    showCritical_ = show;
    recolor();
}

void GraphScene::setCopy(int copy)
{
    copy_ = copy;
    recolor();
}

void GraphScene::setDark(bool dark)
{
    if (theme_->dark == dark)
        return;
    theme_ = &sceneTheme(dark);
    setBackgroundBrush(theme_->background);
    recolor();
    update();
}

void GraphScene::setShowShapes(bool show)
{
    showShapes_ = show;
    for (EdgeItem* e : edges_)
        e->setLabelVisible(show);
    update();
}

NodeItem* GraphScene::itemOfNode(NodeId node) const
{
    if (!layout_ || node < 0 || size_t(node) >= layout_->display.itemOfNode.size())
        return nullptr;
    const int i = layout_->display.itemOfNode[size_t(node)];
    return i < 0 ? nullptr : items_[size_t(i)];
}

const DisplayItem* GraphScene::selectedDisplayItem() const
{
    const QList<QGraphicsItem*> selected = selectedItems();
    if (selected.isEmpty() || !layout_)
        return nullptr;
    const auto* item = dynamic_cast<const NodeItem*>(selected.first());
    return item ? &layout_->display.items[size_t(item->index())] : nullptr;
}

NodeId GraphScene::selectedNode() const
{
    const DisplayItem* di = selectedDisplayItem();
    return di ? di->node : kNone;
}

ValueId GraphScene::selectedValue() const
{
    const DisplayItem* di = selectedDisplayItem();
    return !di || di->kind == DisplayItem::Kind::Operator ? kNone : di->value;
}

QString GraphScene::nameOf(const QGraphicsItem* item) const
{
    if (!layout_ || !prepared_)
        return {};
    const Graph& graph = prepared_->model.graph;
    if (const auto* node = dynamic_cast<const NodeItem*>(item)) {
        const DisplayItem& di = layout_->display.items[size_t(node->index())];
        switch (di.kind) {
        case DisplayItem::Kind::Operator: return QString::fromStdString(graph.node(di.node).name);
        case DisplayItem::Kind::Group: return QString::fromStdString(layout_->display.groups.prefixes[size_t(di.group)]);
        default: return QString::fromStdString(graph.value(di.value).name);
        }
    }
    if (const auto* edge = dynamic_cast<const EdgeItem*>(item)) {
        const DisplayEdge& de = layout_->display.edges[size_t(edge->index())];
        return de.value == kNone ? QString() : QString::fromStdString(graph.value(de.value).name);
    }
    return {};
}

QString GraphScene::toolTipOf(NodeId node) const
{
    if (!prepared_ || node < 0 || size_t(node) >= prepared_->model.graph.nodeCount())
        return {};
    const Graph& graph = prepared_->model.graph;
    const Node& n = graph.node(node);
    const size_t id = size_t(node);
    auto esc = [](const std::string& s) { return QString::fromStdString(printable(s)).toHtmlEscaped(); };
    QStringList lines;
    lines << QStringLiteral("<b>%1</b>").arg(esc(n.domain.empty() ? n.opType : n.domain + "." + n.opType));
    lines << esc(n.name);
    QStringList shapes;
    for (ValueId v : n.outputs)
        if (v != kNone)
            shapes << esc(graph.value(v).type.toString());
    lines << tr("output: %1", "", int(shapes.size())).arg(shapes.join(QStringLiteral(", ")));
    const NodeCost& cost = prepared_->staticCosts[id];
    const PlannedModel* a = analysis_.get();
    const bool planned = a && a->nodeSeconds.size() == graph.nodeCount();
    QString costText = cost.known ? tr("FLOPs %1, %2 moved")
                                        .arg(QString::fromStdString(formatFlops(cost.flops)),
                                             formatBytes(cost.bytes()))
                                  : tr("FLOPs unknown (sizes not known)");
    if (planned)
        costText += tr("; cost %1 (%2)").arg(formatSeconds(a->nodeSeconds[id]),
                                             a->costs.measured ? tr("measured") : tr("estimated"));
    lines << costText;
    if (planned) {
        const Schedule& s = a->plan.schedule;
        QStringList owners;
        for (int copy = 0; copy < s.degree; ++copy)
            owners << QString::number(s.owner[size_t(s.instance(node, copy))]);
        QString cluster = s.degree > 1 ? tr("clusters %1 (per copy)").arg(owners.join(QStringLiteral(", ")))
                                       : tr("cluster %1").arg(owners.join(QString()));
        if (a->cloneCount[0][id] > 0)
            cluster += tr(", cloned into %n more", "", a->cloneCount[0][id]);
        lines << cluster;
        const Distances& d = a->metrics.distances;
        if (id < d.tlevel.size())
            lines << tr("t-level %1, b-level %2").arg(formatSeconds(d.tlevel[id]), formatSeconds(d.blevel[id]));
        if (a->onCriticalPath[id])
            lines << tr("on the critical path");
    }
    return QStringLiteral("<div style=\"white-space:nowrap\">%1</div>").arg(lines.join(QStringLiteral("<br>")));
}

void GraphScene::selectNode(NodeId node)
{
    clearSelection();
    if (NodeItem* item = itemOfNode(node))
        item->setSelected(true);
}

void GraphScene::setTeachingOverlay(std::vector<int> clusters, std::vector<NodeId> current, QString caption)
{
    teachClusters_ = std::move(clusters);
    teachCurrent_ = std::move(current);
    teachCaption_ = caption.isEmpty() ? tr("path peeled in this step") : caption;
    recolor();
}

void GraphScene::clearTeachingOverlay()
{
    teachClusters_.clear();
    teachCurrent_.clear();
    recolor();
}

void GraphScene::recolorTeaching()
{
    const DisplayGraph& d = layout_->display;
    std::vector<char> current(teachClusters_.size(), 0);
    std::set<std::pair<NodeId, NodeId>> path;
    for (size_t k = 0; k < teachCurrent_.size(); ++k) {
        current[size_t(teachCurrent_[k])] = 1;
        if (k + 1 < teachCurrent_.size())
            path.insert({teachCurrent_[k], teachCurrent_[k + 1]});
    }
    for (size_t i = 0; i < d.items.size(); ++i) {
        const DisplayItem& di = d.items[i];
        if (di.kind != DisplayItem::Kind::Operator)
            continue;
        const int c = teachClusters_[size_t(di.node)];
        items_[i]->setFill(c >= 0 ? clusterColor(c) : theme_->unclustered);
        items_[i]->setCritical(current[size_t(di.node)] != 0);
        items_[i]->setCloneCount(0);
    }
    for (size_t i = 0; i < d.edges.size(); ++i) {
        const DisplayEdge& de = d.edges[i];
        const bool onPath = path.count({de.fromNode, de.toNode}) > 0;
        edges_[i]->setStyle(onPath ? EdgeItem::Style::Critical : EdgeItem::Style::Normal,
                            onPath ? theme_->critical : theme_->fadedEdge);
    }
    Q_EMIT legendChanged();
}

void GraphScene::recolorGroup(NodeItem* item, int group, const PlannedModel* a, size_t copy, double maxSeconds)
{
    const Graph& graph = prepared_->model.graph;
    const std::vector<NodeId>& members = layout_->display.groups.members[size_t(group)];
    // What the module holds: its clusters (by share of nodes), operators, costs, critical nodes.
    std::map<int, int> clusters;          // nodes by cluster
    std::map<int, double> clusterSeconds;  // their costs by cluster
    std::map<std::string, int> ops;
    double seconds = 0;
    bool critical = false, allKnown = true;
    for (NodeId n : members) {
        ++ops[graph.node(n).opType];
        if (a) {
            const int c = a->clusterOfNode[copy][size_t(n)];
            ++clusters[c];
            if (std::isfinite(a->nodeSeconds[size_t(n)])) {
                seconds += a->nodeSeconds[size_t(n)];
                clusterSeconds[c] += a->nodeSeconds[size_t(n)];
            } else {
                allKnown = false;
            }
            critical = critical || a->onCriticalPath[size_t(n)];
        }
    }
    // Shares by cost (the work each cluster does in the module), by node count when costs are unknown.
    const bool byCost = allKnown && seconds > 0;
    std::vector<std::pair<double, int>> byShare;  // (-share, cluster)
    for (const auto& [c, count] : clusters)
        byShare.emplace_back(-(byCost ? clusterSeconds[c] / seconds : double(count) / double(members.size())), c);
    std::sort(byShare.begin(), byShare.end());
    std::vector<std::pair<int, std::string>> opsByCount;
    for (const auto& [op, count] : ops)
        opsByCount.emplace_back(-count, op);
    std::sort(opsByCount.begin(), opsByCount.end());

    QColor fill = theme_->unknownFill;
    QList<QPair<QColor, double>> bands;
    switch (mode_) {
    case ColorMode::Cluster:
        if (!byShare.empty())
            fill = clusterColor(byShare.front().second);
        for (const auto& [share, c] : byShare)
            bands.append({clusterColor(c), -share});
        if (bands.size() < 2)
            bands.clear();
        break;
    case ColorMode::OpType:
        if (!opsByCount.empty())
            fill = opTypeColor(QString::fromStdString(opsByCount.front().second));
        break;
    case ColorMode::Time:
        if (a && maxSeconds > 0)  // the module's mean node on the nodes' scale
            fill = heatColor(std::sqrt(std::min(1.0, seconds / double(members.size()) / maxSeconds)));
        break;
    }
    item->setFill(fill);
    item->setBands(bands);
    item->setCritical(a && showCritical_ && critical);
    item->setCloneCount(0);

    QStringList lines;
    const QString prefix = QString::fromStdString(printable(layout_->display.groups.prefixes[size_t(group)]));
    lines << tr("<b>module %1</b>").arg(prefix.toHtmlEscaped());
    lines << tr("%1 nodes, collapsed (right-click to expand)").arg(members.size());
    QStringList opText;
    for (size_t k = 0; k < opsByCount.size() && k < 5; ++k)
        opText << QStringLiteral("%1 %2").arg(QString::fromStdString(opsByCount[k].second)).arg(-opsByCount[k].first);
    lines << opText.join(QStringLiteral(", ")).toHtmlEscaped();
    if (a) {
        QStringList parts;
        for (const auto& [share, c] : byShare)
            parts << tr("%1 (%2 nodes, %3 %)").arg(c).arg(clusters[c]).arg(-share * 100, 0, 'f', 0);
        lines << tr("clusters %1").arg(parts.join(QStringLiteral(", ")));
        lines << tr("cost %1 (%2)").arg(formatSeconds(seconds), a->costs.measured ? tr("measured") : tr("estimated"));
        if (critical)
            lines << tr("holds nodes of the critical path");
    }
    item->setToolTip(QStringLiteral("<div style=\"white-space:nowrap\">%1</div>").arg(lines.join(QStringLiteral("<br>"))));
}

void GraphScene::recolor()
{
    if (!layout_ || !prepared_)
        return;
    if (!teachClusters_.empty() && teachClusters_.size() == prepared_->model.graph.nodeCount()) {
        recolorTeaching();
        return;
    }
    const DisplayGraph& d = layout_->display;
    const Graph& graph = prepared_->model.graph;
    const PlannedModel* a = analysis_.get();
    const size_t copy = a ? std::min(size_t(std::max(copy_, 0)), a->clusterOfNode.size() - 1) : 0;
    const bool valid = a && a->clusterOfNode[copy].size() == graph.nodeCount();

    double maxSeconds = 0;
    if (valid)
        for (double s : a->nodeSeconds)
            if (std::isfinite(s))
                maxSeconds = std::max(maxSeconds, s);

    for (size_t i = 0; i < d.items.size(); ++i) {
        const DisplayItem& di = d.items[i];
        NodeItem* item = items_[i];
        if (di.kind == DisplayItem::Kind::Group) {
            recolorGroup(item, di.group, valid ? a : nullptr, copy, maxSeconds);
            continue;
        }
        if (di.kind != DisplayItem::Kind::Operator) {
            item->setFill(theme_->terminalFill);
            item->setCritical(false);
            continue;
        }
        const size_t n = size_t(di.node);
        QColor fill = theme_->unknownFill;
        switch (mode_) {
        case ColorMode::Cluster:
            if (valid)
                fill = clusterColor(a->clusterOfNode[copy][n]);
            break;
        case ColorMode::OpType:
            fill = opTypeColor(QString::fromStdString(graph.node(di.node).opType));
            break;
        case ColorMode::Time:
            if (valid && maxSeconds > 0 && std::isfinite(a->nodeSeconds[n]))  // unknown costs stay grey
                fill = heatColor(std::sqrt(a->nodeSeconds[n] / maxSeconds));
            break;
        }
        item->setFill(fill);
        item->setToolTip(toolTipOf(di.node));
        item->setCritical(valid && showCritical_ && a->onCriticalPath[n]);
        item->setCloneCount(valid ? a->cloneCount[copy][n] : 0);
    }
    // Critical edges between boxes: a collapsed module's box stands for all of its nodes.
    std::set<std::pair<int, int>> criticalItems;
    if (valid && !d.groups.prefixes.empty())
        for (const auto& [u, v] : a->criticalEdges)
            criticalItems.insert({d.itemOfNode[size_t(u)], d.itemOfNode[size_t(v)]});
    for (size_t i = 0; i < d.edges.size(); ++i) {
        const DisplayEdge& de = d.edges[i];
        EdgeItem::Style style = EdgeItem::Style::Normal;
        QColor color = theme_->edge;
        if (valid && de.fromNode != kNone && de.toNode != kNone) {
            if (showCritical_ && (a->criticalEdges.count({de.fromNode, de.toNode}) || criticalItems.count({de.from, de.to}))) {
                style = EdgeItem::Style::Critical;
                color = theme_->critical;
            } else if (a->crossClusterEdges[copy].count({de.fromNode, de.toNode})) {
                style = EdgeItem::Style::CrossCluster;
                color = clusterColor(a->clusterOfNode[copy][size_t(de.fromNode)]).darker(140);
            }
        }
        edges_[i]->setStyle(style, color);
    }
    Q_EMIT legendChanged();
}

QList<GraphScene::LegendEntry> GraphScene::legend() const
{
    using Mark = LegendEntry::Mark;
    QList<LegendEntry> out;
    if (!prepared_)
        return out;
    const PlannedModel* a = analysis_.get();
    if (!note_.isEmpty())
        for (const QString& line : note_.split(QLatin1Char('\n')))
            out.append({Mark::None, {}, line});
    if (teachingOverlay()) {
        if (std::find(teachClusters_.begin(), teachClusters_.end(), -1) != teachClusters_.end())
            out.append({Mark::Box, theme_->unclustered, tr("not clustered yet")});
        out.append({Mark::Stroke, theme_->critical, teachCaption_});
        return out;
    }
    switch (mode_) {
    case ColorMode::Cluster:
        if (a)
            for (size_t c = 0; c < a->loads.size(); ++c)
                out.append({Mark::Box, clusterColor(int(c)), tr("cluster %1: %2").arg(c).arg(formatSeconds(a->loads[c]))});
        break;
    case ColorMode::OpType: {
        std::map<std::string, int> counts;
        for (const Node& n : prepared_->model.graph.nodes())
            ++counts[n.opType];
        std::vector<std::pair<int, std::string>> byCount;
        for (const auto& [op, count] : counts)
            byCount.emplace_back(-count, op);
        std::sort(byCount.begin(), byCount.end());
        for (size_t k = 0; k < byCount.size() && k < 14; ++k)
            out.append({Mark::Box, opTypeColor(QString::fromStdString(byCount[k].second)),
                        QStringLiteral("%1 (%2)").arg(QString::fromStdString(byCount[k].second)).arg(-byCount[k].first)});
        if (byCount.size() > 14)
            out.append({Mark::None, {}, tr("... %1 more").arg(byCount.size() - 14)});
        break;
    }
    case ColorMode::Time: {
        double maxSeconds = 0;
        if (a)
            for (double s : a->nodeSeconds)
                maxSeconds = std::max(maxSeconds, std::isfinite(s) ? s : 0.0);
        const QString source = a && a->costs.measured ? tr("measured") : tr("estimated");
        for (double t : {1.0, 0.25, 0.0625, 0.0})
            out.append({Mark::Box, heatColor(std::sqrt(t)), QStringLiteral("%1 (%2)").arg(formatMs(t * maxSeconds), source)});
        break;
    }
    }
    if (a && showCritical_ && mode_ == ColorMode::Cluster)
        out.append({Mark::Stroke, theme_->critical, tr("critical path (%1 nodes)").arg(a->metrics.criticalPath.size())});
    return out;
}

QSize GraphScene::legendSize(const QFont& font) const
{
    const QList<LegendEntry> entries = legend();
    if (entries.isEmpty())
        return {};
    const QFontMetrics fm(font);
    int width = 0;
    for (const LegendEntry& e : entries)
        width = std::max(width, fm.horizontalAdvance(e.text));
    const int row = fm.height() + 3;
    return QSize(width + 34, row * int(entries.size()) + 10);
}

void GraphScene::paintLegend(QPainter* painter, const QRect& box, const QFont& font) const
{
    const QList<LegendEntry> entries = legend();
    if (entries.isEmpty())
        return;
    painter->save();
    painter->setFont(font);
    const QFontMetrics fm(font);
    const int row = fm.height() + 3;
    painter->setPen(theme_->panelBorder);
    painter->setBrush(theme_->panel);
    painter->drawRoundedRect(box, 4, 4);
    int y = box.top() + 5;
    for (const LegendEntry& e : entries) {
        const QRect mark(box.left() + 8, y + 2, 14, row - 7);
        if (e.mark == LegendEntry::Mark::Box) {
            painter->setPen(theme_->swatchBorder);
            painter->setBrush(e.color);
            painter->drawRect(mark);
        } else if (e.mark == LegendEntry::Mark::Stroke) {  // as the edges are drawn (EdgeItem)
            painter->setPen(QPen(e.color, 3.4, Qt::SolidLine, Qt::RoundCap));
            painter->drawLine(QPointF(mark.left() + 1, mark.center().y() + 0.5), QPointF(mark.right(), mark.center().y() + 0.5));
        }
        painter->setPen(theme_->panelText);
        painter->drawText(QRect(box.left() + 28, y, box.width() - 30, row), Qt::AlignVCenter | Qt::AlignLeft, e.text);
        y += row;
    }
    painter->restore();
}

}  // namespace ramiel::studio
