#include "schedule_charts.h"

#include "metric_rows.h"
#include "palette.h"
#include "studio_session.h"

#include "core/util/text.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace ramiel::studio {

GanttChart::GanttChart(QWidget* parent) : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
}

namespace {

// Teaching's colors: the graph's color index of each cluster, -1 for the nodes not yet clustered.
QColor colorOf(const std::vector<int>& colors, int cluster, const QPalette& palette)
{
    if (cluster < 0 || size_t(cluster) >= colors.size())
        return clusterColor(cluster);
    return colors[size_t(cluster)] >= 0 ? clusterColor(colors[size_t(cluster)])
                                        : sceneTheme(isDark(palette)).unclustered;
}

QString rowLabel(const std::vector<int>& colors, int cluster, const QString& prefix)
{
    if (cluster < 0 || size_t(cluster) >= colors.size())
        return prefix + QString::number(cluster);
    if (colors[size_t(cluster)] < 0)
        return GanttChart::tr("rest");
    return (prefix.isEmpty() ? QString() : QStringLiteral("C")) + QString::number(colors[size_t(cluster)]);
}

}  // namespace

void GanttChart::setAnalysis(std::shared_ptr<const PlannedModel> analysis, std::vector<int> colors, QString title)
{
    analysis_ = std::move(analysis);
    colors_ = std::move(colors);
    title_ = std::move(title);
    update();
}

QColor GanttChart::rowColor(int cluster) const { return colorOf(colors_, cluster, palette()); }

QRectF GanttChart::plotArea() const { return QRectF(rect()).adjusted(34, 18, -10, -24); }

void GanttChart::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!analysis_ || analysis_->plan.simulation.gantt.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No schedule"));
        return;
    }
    const Simulation& sim = analysis_->plan.simulation;
    const Schedule& s = analysis_->plan.schedule;
    const QRectF area = plotArea();
    const int workers = std::max<int>(1, int(s.clusters.size()));
    const double rowH = area.height() / workers;
    const double scale = sim.makespan > 0 ? area.width() / sim.makespan : 0;
    p.setRenderHint(QPainter::Antialiasing, false);

    // Axis: time in ms, with a few round ticks.
    p.setPen(palette().color(QPalette::Text));
    QFont f = font();
    f.setPointSizeF(std::max(7.0, f.pointSizeF() - 1.5));
    p.setFont(f);
    const double ms = sim.makespan * 1e3;
    const double rough = ms / 5;
    const double mag = std::pow(10.0, std::floor(std::log10(std::max(rough, 1e-9))));
    const double step = rough / mag < 2 ? mag : rough / mag < 5 ? 2 * mag : 5 * mag;
    for (double t = 0; t <= ms + 1e-9; t += step) {
        const double x = area.left() + t * 1e-3 * scale;
        p.setPen(palette().color(QPalette::Mid));
        p.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(x - 30, area.bottom() + 2, 60, 18), Qt::AlignHCenter | Qt::AlignTop,
                   QString::number(t, 'g', 4) + (t == 0 ? QStringLiteral(" ms") : QString()));
    }
    for (int w = 0; w < workers; ++w)
        p.drawText(QRectF(0, area.top() + w * rowH, 30, rowH), Qt::AlignVCenter | Qt::AlignRight,
                   rowLabel(colors_, w, QStringLiteral("W")));

    const auto& critical = analysis_->onCriticalPath;
    const QFontMetricsF metrics(f);
    bool threaded = false;
    for (size_t i = 0; i < sim.gantt.size(); ++i) {
        const GanttEntry& e = sim.gantt[i];
        const QRectF r = barRect(int(i));
        QColor c = rowColor(e.worker);
        if (e.clone)
            c = c.lighter(140);
        p.fillRect(r, c);
        if (!colors_.empty() && colors_[size_t(e.worker)] < 0) {
            // Not clustered yet: pale as in the graph, outlined to show on the chart's background.
            p.setPen(QPen(palette().color(QPalette::Mid), 1));
            p.drawRect(r);
        }
        // Items on several intra-op threads: hatched, with the count where it fits.
        const int threads = s.threadsOf(size_t(e.worker), e.instance);
        if (threads > 1) {
            threaded = true;
            p.fillRect(r, QBrush(c.darker(150), Qt::BDiagPattern));
            const QString count = QStringLiteral("%1t").arg(threads);
            if (r.width() >= metrics.horizontalAdvance(count) + 6 && r.height() >= metrics.height()) {
                const QRectF label = metrics.boundingRect(count).adjusted(-2, 0, 2, 0);
                QRectF box(0, 0, label.width(), label.height());
                box.moveCenter(r.center());
                p.fillRect(box, c.lighter(130));
                p.setPen(Qt::black);
                p.drawText(box, Qt::AlignCenter, count);
            }
        }
        const NodeId n = s.node(e.instance);
        // Outline critical-path items where there is room (thin ones would turn the row black).
        if (r.width() >= 4 && size_t(n) < critical.size() && critical[size_t(n)] && s.copy(e.instance) == 0) {
            p.setPen(QPen(Qt::black, 1));
            p.drawRect(r);
        }
    }
    QString title = caption();
    if (threaded)
        title = tr("hatched: on several threads (2t: two)") + QStringLiteral("  |  ") + title;
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRectF(area.left(), 0, area.width(), area.top() + 2), Qt::AlignRight | Qt::AlignTop,
               metrics.elidedText(title, Qt::ElideLeft, area.width()));
}

QString GanttChart::caption() const
{
    if (!analysis_)
        return {};
    const Simulation& sim = analysis_->plan.simulation;
    // What runs: the workers and their threads (or what teaching says), then the simulated figures.
    const QString what = title_.isEmpty() ? QString::fromStdString(describeThreads(analysis_->plan.schedule)) : title_;
    return what + QStringLiteral("  |  ") +
           (analysis_->metrics.costsComplete()
                ? tr("makespan %1, speedup %2").arg(formatSeconds(sim.makespan)).arg(sim.speedup, 0, 'f', 2)
                : analysis_->metrics.unknownCosts == GraphMetrics::UnknownCosts::InputSizes
                    ? tr("nodes of unknown cost: times not meaningful until the input sizes are set")
                    : tr("nodes of unknown cost: times not meaningful until measured (Run)"));
}

int GanttChart::entryAt(QPointF pos) const
{
    if (!analysis_)
        return -1;
    const Simulation& sim = analysis_->plan.simulation;
    const int workers = std::max<int>(1, int(analysis_->plan.schedule.clusters.size()));
    const QRectF area = plotArea();
    if (!area.contains(pos) || sim.makespan <= 0)
        return -1;
    const int worker = int((pos.y() - area.top()) / (area.height() / workers));
    const double t = (pos.x() - area.left()) / area.width() * sim.makespan;
    const double slack = 2.0 / area.width() * sim.makespan;
    // The bar under the pointer; else one within 2 pixels (thin bars are hard to hit).
    int near = -1;
    for (size_t i = 0; i < sim.gantt.size(); ++i) {
        const GanttEntry& e = sim.gantt[i];
        if (e.worker != worker)
            continue;
        if (t >= e.start && t <= e.end)
            return int(i);
        if (near < 0 && t >= e.start - slack && t <= e.end + slack)
            near = int(i);
    }
    return near;
}

QString GanttChart::toolTipAt(QPointF pos) const
{
    const int i = entryAt(pos);
    if (i < 0)
        return {};
    const GanttEntry& e = analysis_->plan.simulation.gantt[size_t(i)];
    const Schedule& s = analysis_->plan.schedule;
    const Node& n = analysis_->prepared->model.graph.node(s.node(e.instance));
    QString copy;
    if (s.degree > 1)
        copy = tr(", copy %1").arg(s.copy(e.instance));
    const int threads = s.threadsOf(size_t(e.worker), e.instance);
    return tr("%1 (%2)\n%3%4%5, %6\n%7 to %8 (%9)")
        .arg(QString::fromStdString(printable(n.name)), QString::fromStdString(n.opType))
        .arg(colors_.empty() ? tr("worker W%1").arg(e.worker)
             : colors_[size_t(e.worker)] >= 0 ? tr("cluster %1").arg(colors_[size_t(e.worker)])
                                              : tr("not yet clustered"))
        .arg(copy, e.clone ? tr(", a clone") : QString(),
             threads == 1 ? tr("1 intra-op thread") : tr("%1 intra-op threads").arg(threads))
        .arg(formatSeconds(e.start), formatSeconds(e.end), formatSeconds(e.end - e.start));
}

QRectF GanttChart::barRect(int i) const
{
    if (!analysis_ || i < 0 || size_t(i) >= analysis_->plan.simulation.gantt.size())
        return {};
    const Simulation& sim = analysis_->plan.simulation;
    const QRectF area = plotArea();
    const int workers = std::max<int>(1, int(analysis_->plan.schedule.clusters.size()));
    const double rowH = area.height() / workers;
    const double scale = sim.makespan > 0 ? area.width() / sim.makespan : 0;
    const GanttEntry& e = sim.gantt[size_t(i)];
    return QRectF(area.left() + e.start * scale, area.top() + e.worker * rowH + 2,
                  std::max(1.0, (e.end - e.start) * scale), rowH - 4);
}

bool GanttChart::event(QEvent* event)
{
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString tip = toolTipAt(help->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), tip, this);
        return true;
    }
    return QWidget::event(event);
}

void GanttChart::mousePressEvent(QMouseEvent* event)
{
    const int i = entryAt(event->position());
    if (i >= 0)
        Q_EMIT nodeClicked(analysis_->plan.schedule.node(analysis_->plan.simulation.gantt[size_t(i)].instance));
}

LoadsChart::LoadsChart(QWidget* parent) : QWidget(parent), view_(new QChartView(this))
{
    view_->setRenderHint(QPainter::Antialiasing);
    view_->chart()->legend()->hide();
    view_->chart()->setMargins(QMargins(4, 4, 4, 4));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view_);
}

void LoadsChart::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        setAnalysis(analysis_, colors_);
}

QStringList LoadsChart::categories() const
{
    QStringList out;
    if (analysis_)
        for (size_t c = 0; c < analysis_->loads.size(); ++c)
            out << rowLabel(colors_, int(c), QString());
    return out;
}

void LoadsChart::setAnalysis(std::shared_ptr<const PlannedModel> analysis, std::vector<int> colors)
{
    analysis_ = analysis;
    colors_ = std::move(colors);
    QChart* chart = view_->chart();
    chart->removeAllSeries();
    // Follow the application's light or dark palette (before the bars get their cluster colors).
    chart->setTheme(isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setBackgroundBrush(palette().color(QPalette::Base));
    chart->setBackgroundRoundness(0);
    chart->legend()->hide();
    for (QAbstractAxis* axis : chart->axes())
        chart->removeAxis(axis);
    bars_ = 0;
    if (!analysis)
        return;
    // One set per cluster, non-zero only in its own column, so each bar gets its cluster's color.
    auto* series = new QStackedBarSeries;
    const size_t clusters = analysis->loads.size();
    double maxMs = 0;
    const QStringList labels = categories();
    for (size_t c = 0; c < clusters; ++c) {
        auto* set = new QBarSet(tr("cluster %1").arg(labels[int(c)]));
        for (size_t k = 0; k < clusters; ++k)
            *set << (k == c ? analysis->loads[c] * 1e3 : 0.0);
        const QColor color = colorOf(colors_, int(c), palette());
        set->setColor(color);
        set->setBorderColor(color.darker(130));
        series->append(set);
        maxMs = std::max(maxMs, analysis->loads[c] * 1e3);
    }
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis;
    x->append(labels);
    if (clusters > 10)
        x->setLabelsAngle(-90);  // many clusters (Teaching's early steps): upright labels stay whole
    x->setTitleText(tr("cluster"));
    auto* y = new QValueAxis;
    y->setRange(0, maxMs * 1.1 + 1e-6);
    y->applyNiceNumbers();  // round ticks: 0, 20, 40, 60 rather than 0, 14, 28.1, 42.1
    y->setTitleText(tr("load (ms)"));
    y->setLabelFormat(QStringLiteral("%g"));  // ticks are round: 1000, not %.3g's 1e+03
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    bars_ = int(clusters);
}

}  // namespace ramiel::studio
