#include "properties_panel.h"

#include "initializer_view.h"
#include "metric_rows.h"
#include "palette.h"
#include "studio_session.h"
#include "tree_columns.h"

#include "core/ir/data_type.h"
#include "core/util/text.h"
#include "display_graph.h"

#include <QEvent>
#include <QHeaderView>
#include <QSplitter>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <cmath>

namespace ramiel::studio {
namespace {

QString text(const std::string& s) { return QString::fromStdString(printable(s)); }

QTreeWidgetItem* section(QTreeWidget* tree, const QString& title)
{
    auto* item = new QTreeWidgetItem(tree, {title});
    QFont f = item->font(0);
    f.setBold(true);
    item->setFont(0, f);
    item->setFirstColumnSpanned(true);
    item->setExpanded(true);
    return item;
}

QTreeWidgetItem* row(QTreeWidgetItem* parent, const QString& name, const QString& value)
{
    auto* item = new QTreeWidgetItem(parent, {name, value});
    setFullTextTips(item);
    return item;
}

constexpr int kValueRole = Qt::UserRole + 1;  // the ValueId an input or output row stands for

}  // namespace

PropertiesPanel::PropertiesPanel(QWidget* parent)
    : QWidget(parent), tree_(new QTreeWidget(this)), initializer_(new InitializerView(this))
{
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("Property"), tr("Value")});
    tree_->setAlternatingRowColors(true);
    keepColumnsFitted(tree_, Qt::ElideMiddle);  // names keep their ends: ".../conv1/Conv"
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(tree_);
    split->addWidget(initializer_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(split);
    // A constant input clicked (or reached with the keys): its statistics below.
    connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        const QVariant v = item ? item->data(0, kValueRole) : QVariant();
        if (v.isValid() && analysis_ && analysis_->prepared->model.graph.value(ValueId(v.toInt())).isConstant()) {
            initializer_->inspect(analysis_, ValueId(v.toInt()));
            // The list got shorter: keep the clicked row in sight.
            QTimer::singleShot(0, this, [this] {
                if (tree_->currentItem())
                    tree_->scrollToItem(tree_->currentItem());
            });
        }
    });
    rebuild();
}

QTreeWidgetItem* PropertiesPanel::rowOf(ValueId value) const
{
    for (QTreeWidgetItemIterator it(tree_); *it; ++it)
        if ((*it)->data(0, kValueRole).isValid() && (*it)->data(0, kValueRole).toInt() == value)
            return *it;
    return nullptr;
}

void PropertiesPanel::setAnalysis(std::shared_ptr<const PlannedModel> analysis)
{
    analysis_ = std::move(analysis);
    if (analysis_ && node_ != kNone && size_t(node_) >= analysis_->prepared->model.graph.nodeCount())
        node_ = kNone;
    if (analysis_ && value_ != kNone && size_t(value_) >= analysis_->prepared->model.graph.valueCount())
        value_ = kNone;
    rebuild();
}

void PropertiesPanel::showNode(NodeId node)
{
    node_ = node;
    value_ = kNone;
    rebuild();
}

void PropertiesPanel::showValue(ValueId value)
{
    node_ = kNone;
    value_ = value;
    rebuild();
}

void PropertiesPanel::rebuildValue()
{
    const Graph& graph = analysis_->prepared->model.graph;
    const Value& v = graph.value(value_);
    QTreeWidgetItem* s = section(tree_, v.isGraphInput    ? tr("Graph input")
                                        : v.isGraphOutput ? tr("Graph output")
                                        : v.isConstant()  ? tr("Constant")
                                                          : tr("Value"));
    row(s, tr("Name"), text(v.name));
    row(s, tr("Element type"), QString::fromStdString(dataTypeName(v.type.dtype)));
    row(s, tr("Shape"), QString::fromStdString(shapeText(v.type)));
    if (const auto bytes = v.type.byteSize())
        row(s, tr("Size"), formatBytes(double(*bytes)));
    if (v.isGraphInput && v.isGraphOutput)
        row(s, tr("Also"), tr("graph output"));
    QTreeWidgetItem* links = section(tree_, tr("Connections"));
    row(links, tr("Produced by"), v.producer == kNone ? (v.isGraphInput ? tr("(the caller)") : tr("(none)"))
                                                      : text(graph.node(v.producer).name));
    QStringList consumers;
    for (NodeId c : v.consumers)
        consumers << text(graph.node(c).name);
    row(links, tr("Read by"), consumers.isEmpty() ? (v.isGraphOutput ? tr("(the caller)") : tr("(none)"))
                                                  : consumers.join(QStringLiteral(", ")));
    tree_->expandAll();
    fitColumns(tree_);
}

void PropertiesPanel::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        rebuild();
}

void PropertiesPanel::rebuild()
{
    tree_->clear();
    // A constant shown on its own is inspected; else nothing until a constant input is clicked.
    initializer_->inspect(analysis_, value_);
    if (analysis_ && value_ != kNone)
        return rebuildValue();
    if (!analysis_ || node_ == kNone) {
        auto* hint = new QTreeWidgetItem(tree_, {tr("Click a box, an input or an output")});
        hint->setFirstColumnSpanned(true);
        hint->setForeground(0, palette().brush(QPalette::PlaceholderText));
        return;
    }
    const Graph& graph = analysis_->prepared->model.graph;
    const Node& n = graph.node(node_);
    const size_t id = size_t(node_);

    QTreeWidgetItem* op = section(tree_, tr("Operator"));
    row(op, tr("Type"), text(n.domain.empty() ? n.opType : n.domain + "." + n.opType));
    row(op, tr("Name"), text(n.name));
    row(op, tr("Opset"), QString::number(n.opset));
    row(op, tr("Id"), QString::number(n.id));

    if (!n.attributes.empty()) {
        QTreeWidgetItem* attrs = section(tree_, tr("Attributes"));
        for (const Attribute& a : n.attributes)
            row(attrs, text(a.name), text(a.toString()));
    }
    auto values = [&](const QString& title, const std::vector<ValueId>& ids) {
        QTreeWidgetItem* s = section(tree_, title);
        for (size_t k = 0; k < ids.size(); ++k) {
            if (ids[k] == kNone) {
                row(s, QString::number(k), tr("(omitted)"));
                continue;
            }
            const Value& v = graph.value(ids[k]);
            QString detail = QString::fromStdString(v.type.toString());
            if (v.isConstant())
                detail += tr("  constant (click: statistics)");
            else if (v.isGraphInput)
                detail += tr("  graph input");
            if (v.isGraphOutput)
                detail += tr("  graph output");
            QTreeWidgetItem* r = row(s, text(v.name), detail);
            r->setData(0, kValueRole, int(ids[k]));
        }
    };
    values(tr("Inputs"), n.inputs);
    values(tr("Outputs"), n.outputs);

    const NodeCost& cost = analysis_->prepared->staticCosts[id];
    QTreeWidgetItem* c = section(tree_, tr("Cost"));
    row(c, tr("FLOPs"), cost.known ? QString::fromStdString(formatFlops(cost.flops)) : tr("unknown"));
    row(c, tr("Bytes moved"), cost.known ? formatBytes(cost.bytes()) : tr("unknown"));
    row(c, tr("Static estimate"), formatSeconds(analysis_->prepared->staticSeconds[id]));
    row(c, analysis_->costs.measured ? tr("Measured (in use)") : tr("In use"), formatSeconds(analysis_->nodeSeconds[id]));

    QTreeWidgetItem* sched = section(tree_, tr("Schedule"));
    const Schedule& s = analysis_->plan.schedule;
    QStringList owners;
    for (int copy = 0; copy < s.degree; ++copy)
        owners << QString::number(s.owner[size_t(s.instance(node_, copy))]);
    row(sched, s.degree > 1 ? tr("Cluster (per copy)") : tr("Cluster"), owners.join(QStringLiteral(", ")));
    if (analysis_->cloneCount[0][id] > 0)
        row(sched, tr("Clones (copy 0)"), tr("%1 other cluster(s)").arg(analysis_->cloneCount[0][id]));
    const Distances& d = analysis_->metrics.distances;
    if (id < d.tlevel.size()) {
        row(sched, tr("t-level"), formatSeconds(d.tlevel[id]));
        row(sched, tr("b-level"), formatSeconds(d.blevel[id]));
    }
    row(sched, tr("Critical path"), analysis_->onCriticalPath[id] ? tr("yes") : tr("no"));
    tree_->expandAll();
    fitColumns(tree_);
}

}  // namespace ramiel::studio
