#include "initializer_view.h"

#include "display_graph.h"
#include "metric_rows.h"
#include "palette.h"
#include "studio_session.h"

#include "core/ir/data_type.h"
#include "core/util/text.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QEvent>
#include <QFutureWatcher>
#include <QLabel>
#include <QLineSeries>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace ramiel::studio {
namespace {

constexpr int kBins = 40;

QString number(double v) { return QString::number(v, 'g', 4); }

}  // namespace

InitializerView::InitializerView(QWidget* parent)
    : QWidget(parent), title_(new QLabel(this)), figures_(new QLabel(this)), chart_(new QChartView(this))
{
    title_->setTextFormat(Qt::RichText);
    title_->setWordWrap(true);
    figures_->setWordWrap(true);
    figures_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumHeight(110);
    chart_->chart()->legend()->hide();
    chart_->chart()->setMargins(QMargins(0, 0, 0, 0));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 2, 4, 2);
    layout->setSpacing(2);
    layout->addWidget(title_);
    layout->addWidget(figures_);
    layout->addWidget(chart_, 1);
    hide();
}

void InitializerView::inspect(std::shared_ptr<const pipeline::PlannedModel> analysis, ValueId value)
{
    ++generation_;
    analysis_ = std::move(analysis);
    value_ = kNone;
    stats_.reset();
    if (!analysis_ || value == kNone || size_t(value) >= analysis_->prepared->model.graph.valueCount() ||
        !analysis_->prepared->model.graph.value(value).isConstant()) {
        hide();
        return;
    }
    value_ = value;
    const Value& v = analysis_->prepared->model.graph.value(value);
    const Tensor& t = *v.initializer;
    title_->setText(tr("<b>%1</b><br>%2, %3 elements, %4")
                        .arg(QString::fromStdString(printable(v.name)).toHtmlEscaped(),
                             QString::fromStdString(t.type().toString()).toHtmlEscaped())
                        .arg(t.numel())
                        .arg(formatBytes(double(t.data.size()))));
    title_->setToolTip(QString::fromStdString(printable(v.name)));
    figures_->setText(tr("computing the statistics..."));
    chart_->chart()->removeAllSeries();
    show();
    // Off the UI thread: a large weight takes a moment. The tensor stays alive with the analysis.
    const int generation = generation_;
    auto tensor = v.initializer;
    auto* watcher = new QFutureWatcher<std::optional<TensorStats>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != generation_)
            return;
        stats_ = watcher->result();
        showStats();
        Q_EMIT statsReady();
    });
    watcher->setFuture(QtConcurrent::run([tensor] { return tensorStats(*tensor, kBins); }));
}

void InitializerView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange && value_ != kNone && stats_)
        showStats();
}

void InitializerView::showStats()
{
    QChart* chart = chart_->chart();
    chart->removeAllSeries();
    for (QAbstractAxis* axis : chart->axes())
        chart->removeAxis(axis);
    chart->setTheme(isDark(palette()) ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    chart->setBackgroundBrush(palette().color(QPalette::Base));
    chart->setBackgroundRoundness(0);
    chart->legend()->hide();
    if (!stats_) {
        const Tensor& t = *analysis_->prepared->model.graph.value(value_).initializer;
        figures_->setText(t.hasData() ? tr("no statistics for %1 elements")
                                            .arg(QString::fromStdString(dataTypeName(t.dtype)))
                                      : tr("the data is not loaded (external file %1)")
                                            .arg(QString::fromStdString(printable(t.externalLocation))));
        chart_->hide();
        return;
    }
    const TensorStats& s = *stats_;
    QString text = tr("min %1, max %2\nmean %3, std %4").arg(number(s.min), number(s.max), number(s.mean),
                                                              number(s.stddev));
    QStringList odd;
    if (s.zeros > 0)
        odd << tr("%1 zeros (%2 %)").arg(s.zeros).arg(100.0 * double(s.zeros) / double(std::max<int64_t>(1, s.count)), 0, 'f', 1);
    if (s.nans > 0)
        odd << tr("%1 NaN").arg(s.nans);
    if (s.infinities > 0)
        odd << tr("%1 infinite").arg(s.infinities);
    if (!odd.isEmpty())
        text += QStringLiteral("\n") + odd.join(QStringLiteral(", "));
    figures_->setText(text);
    if (s.histogram.empty()) {
        chart_->hide();
        return;
    }
    // The histogram as steps over [min, max] (a single bin: a bar around the one value).
    const double lo = s.min, hi = s.max > s.min ? s.max : s.min + 1;
    const double width = (hi - lo) / double(s.histogram.size());
    auto* upper = new QLineSeries;
    int64_t most = 0;
    for (size_t k = 0; k < s.histogram.size(); ++k) {
        const double x0 = lo + width * double(k);
        upper->append(x0, double(s.histogram[k]));
        upper->append(x0 + width, double(s.histogram[k]));
        most = std::max(most, s.histogram[k]);
    }
    auto* area = new QAreaSeries(upper);
    const QColor color = clusterColor(0);
    area->setColor(color);
    area->setBorderColor(color.darker(130));
    chart->addSeries(area);
    auto* x = new QValueAxis;
    x->setRange(lo, hi);
    x->setTickCount(3);
    x->setLabelFormat(QStringLiteral("%.3g"));
    auto* y = new QValueAxis;
    y->setRange(0, double(most) * 1.05);
    y->setTickCount(3);
    y->applyNiceNumbers();
    y->setLabelFormat(QStringLiteral("%.0f"));
    y->setTitleText(tr("count"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    area->attachAxis(x);
    area->attachAxis(y);
    chart_->show();
}

}  // namespace ramiel::studio
