#include "metric_rows.h"

#include "core/util/text.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace ramiel::studio {

QString formatSeconds(double seconds) { return QString::fromStdString(ramiel::formatSeconds(seconds)); }

namespace {
constexpr double kText = std::numeric_limits<double>::quiet_NaN();  // a row without a figure
}  // namespace

QString formatBytes(double bytes) { return QString::fromStdString(ramiel::formatBytes(bytes)); }

bool rowsDiffer(const MetricRow& a, const MetricRow& b, double relative)
{
    if (std::isfinite(a.number) && std::isfinite(b.number)) {
        const double scale = std::max(std::abs(a.number), std::abs(b.number));
        return std::abs(a.number - b.number) > relative * scale;
    }
    return a.value != b.value;
}

QVector<MetricRow> metricRows(const PlannedModel& a)
{
    QVector<MetricRow> rows;
    const GraphMetrics& m = a.metrics;
    const Plan& plan = a.plan;
    auto add = [&](const QString& section, const QString& name, const QString& value, const QString& help,
                   double number = kText) { rows.append({section, name, value, help, number}); };
    const QString graph = QObject::tr("Graph");
    add(graph, QObject::tr("Nodes"), QString::number(m.nodes), QObject::tr("Operators in the main graph"), double(m.nodes));
    add(graph, QObject::tr("Edges"), QString::number(m.edges), QObject::tr("Distinct producer-to-consumer node pairs"));
    add(graph, QObject::tr("Depth"), QString::number(m.depth), QObject::tr("Levels: the longest chain in nodes"));
    add(graph, QObject::tr("Width"), QString::number(m.width), QObject::tr("Most nodes on one level"));
    add(graph, QObject::tr("Parameters"), QString::number(m.parameters / 1e6, 'f', 2) + QStringLiteral(" M"),
        QObject::tr("Elements held by initializers"));
    // With nodes of unknown cost (sizes not known: set them under Input Sizes) the sums are lower
    // bounds and what is simulated from them means nothing.
    const bool complete = m.costsComplete();
    const QString atLeast = complete ? QString() : QStringLiteral(">= ");
    const QString unknown = QObject::tr("unknown (%n node(s) without a cost)", "", int(m.unknownCostNodes.size()));
    add(graph, QObject::tr("FLOPs"), atLeast + QString::fromStdString(formatFlops(m.flops)),
        QObject::tr("Floating-point operations of one sample"), m.flops);
    std::vector<std::pair<size_t, std::string>> ops;
    for (const auto& [op, count] : m.opHistogram)
        ops.emplace_back(count, op);
    std::sort(ops.rbegin(), ops.rend());
    QStringList opText;
    for (size_t k = 0; k < ops.size() && k < 6; ++k)
        opText << QStringLiteral("%1 %2").arg(QString::fromStdString(ops[k].second)).arg(ops[k].first);
    if (ops.size() > 6)
        opText << QObject::tr("+%1 types").arg(ops.size() - 6);
    add(graph, QObject::tr("Operators"), opText.join(QStringLiteral(", ")), QObject::tr("Op histogram, most frequent first"));
    rows.back().help += QStringLiteral(": ") + opText.join(QStringLiteral(", "));

    const QString par = a.costs.measured ? QObject::tr("Parallelism (measured costs)") : QObject::tr("Parallelism (cost model)");
    add(par, QObject::tr("Work T1"), atLeast + formatSeconds(m.work), QObject::tr("Sum of all node costs, one sample"), m.work);
    add(par, QObject::tr("Span T-inf"), atLeast + formatSeconds(m.span), QObject::tr("The critical path's length"), m.span);
    add(par, QObject::tr("Parallelism T1/T-inf"),
        m.parallelism ? QString::number(*m.parallelism, 'f', 3) : QObject::tr("unknown"),
        QObject::tr("Upper bound of the speedup from running branches at once"), m.parallelism ? *m.parallelism : kText);
    add(par, QObject::tr("Critical path"), QObject::tr("%1 nodes").arg(m.criticalPath.size()),
        QObject::tr("Longest source-to-sink path (highlighted in the graph)"), double(m.criticalPath.size()));

    const Schedule& s = plan.schedule;
    const QString sched = QObject::tr("Schedule: %1, P=%2, B=%3, d=%4")
                              .arg(QString::fromStdString(s.algorithm))
                              .arg(a.settings.workers)
                              .arg(a.settings.batch)
                              .arg(a.settings.degree);
    add(sched, QObject::tr("Clusters"), QString::number(s.clusters.size()), QObject::tr("Worker threads the schedule uses"), double(s.clusters.size()));
    if (!a.loads.empty()) {
        const double maxLoad = *std::max_element(a.loads.begin(), a.loads.end());
        const double mean = std::accumulate(a.loads.begin(), a.loads.end(), 0.0) / double(a.loads.size());
        add(sched, QObject::tr("Largest load"), formatSeconds(maxLoad), QObject::tr("Busiest cluster's summed node costs"), maxLoad);
        add(sched, QObject::tr("Balance max/mean"), QString::number(mean > 0 ? maxLoad / mean : 0, 'f', 3),
            QObject::tr("1.0 is perfectly balanced"), mean > 0 ? maxLoad / mean : 0);
    }
    double crossBytes = 0;
    for (const CrossEdge& e : plan.crossEdges)
        crossBytes += e.bytes;
    add(sched, QObject::tr("Cross-cluster edges"),
        QObject::tr("%1 (%2)").arg(plan.crossEdges.size()).arg(formatBytes(crossBytes)),
        QObject::tr("Values handed from one worker to another (dashed in the graph)"), crossBytes);
    add(sched, QObject::tr("Clones"),
        QObject::tr("%1 (removed %2 cross edges)").arg(plan.clones.clones).arg(plan.clones.crossEdgesRemoved()),
        QObject::tr("Cheap nodes duplicated into consumer clusters (+k badges)"));
    add(sched, QObject::tr("Merges"),
        QObject::tr("%1 free, %2 guided").arg(plan.merges.freeMerges).arg(plan.merges.guidedMerges),
        QObject::tr("Cluster merges down to P workers"));
    add(sched, QObject::tr("Serial (simulated)"), complete ? formatSeconds(plan.simulation.serial) : unknown,
        QObject::tr("The whole batch on one core"), complete ? plan.simulation.serial : kText);
    add(sched, QObject::tr("Makespan (simulated)"), complete ? formatSeconds(plan.simulation.makespan) : unknown,
        QObject::tr("Simulated parallel latency on P cores"), complete ? plan.simulation.makespan : kText);
    add(sched, QObject::tr("Speedup (simulated)"),
        complete ? QString::number(plan.simulation.speedup, 'f', 3) : unknown, QObject::tr("Serial / makespan"),
        complete ? plan.simulation.speedup : kText);
    add(sched, QObject::tr("Valid"), plan.validation.valid ? QObject::tr("yes") : QObject::tr("NO"),
        QObject::tr("Passes the deadlock-freedom validator"));
    add(sched, QObject::tr("Planning time"), formatSeconds(plan.planningSeconds), QObject::tr("Clustering, merging, cloning"),
        plan.planningSeconds);
    return rows;
}

}  // namespace ramiel::studio
