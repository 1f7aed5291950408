#include "tuning_panel.h"

#include "metric_rows.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>

namespace ramiel::studio {

TuningPanel::TuningPanel(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), algorithm_(new QComboBox(this)), workers_(new QSpinBox(this)),
      batch_(new QSpinBox(this)), degree_(new QSpinBox(this)), costs_(new QComboBox(this)),
      passStats_(new QLabel(this)), copy_(new QSpinBox(this)), status_(new QLabel(this))
{
    for (const SchedulerInfo& s : schedulers()) {
        algorithm_->addItem(QString::fromStdString(s.name), QString::fromStdString(s.name));
        algorithm_->setItemData(algorithm_->count() - 1, QString::fromStdString(s.summary), Qt::ToolTipRole);
    }
    workers_->setRange(1, 64);
    workers_->setToolTip(tr("Worker threads P: the schedule has at most P clusters"));
    batch_->setRange(1, 256);
    batch_->setToolTip(tr("Batch B, in samples of the model's own input"));
    degree_->setRange(1, 1);
    degree_->setToolTip(tr("Hypercluster degree d: the batch runs as d sub-batches (graph copies), 1 <= d <= B"));
    costs_->addItem(tr("Static (cost model)"));
    costs_->addItem(tr("Measured (last run)"));
    costs_->setToolTip(tr("Node costs for scheduling: the calibrated cost model, or the profile of the last run"));
    copy_->setRange(0, 0);
    copy_->setToolTip(tr("With d > 1 the batch runs as d graph copies: the copy whose clusters the graph shows"));
    status_->setWordWrap(true);
    status_->setForegroundRole(QPalette::PlaceholderText);

    auto* form = new QFormLayout;
    form->addRow(tr("&Algorithm"), algorithm_);
    form->addRow(tr("&Workers P"), workers_);
    form->addRow(tr("&Batch B"), batch_);
    form->addRow(tr("&Degree d"), degree_);
    form->addRow(tr("S&hown copy"), copy_);
    form->addRow(tr("&Costs"), costs_);
    auto* passBox = new QGroupBox(tr("Passes"), this);
    auto* passLayout = new QVBoxLayout(passBox);
    for (const passes::PassInfo& info : passes::registeredPasses()) {
        auto* box = new QCheckBox(QString::fromStdString(info.name), passBox);
        QString tip = QString::fromStdString(info.summary);
        if (info.scheduling)
            tip += tr(" (a scheduling pass: the graph stays as it is)");
        box->setToolTip(tip);
        passLayout->addWidget(box);
        passes_.emplace_back(info.name, box);
        connect(box, &QCheckBox::toggled, this, info.scheduling ? &TuningPanel::apply : &TuningPanel::applyPasses);
    }
    passStats_->setWordWrap(true);
    passStats_->setMaximumWidth(260);
    passStats_->setForegroundRole(QPalette::PlaceholderText);
    passLayout->addWidget(passStats_);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(status_);
    layout->addWidget(passBox);
    layout->addStretch();

    connect(algorithm_, &QComboBox::currentIndexChanged, this, &TuningPanel::apply);
    connect(workers_, &QSpinBox::valueChanged, this, &TuningPanel::apply);
    connect(batch_, &QSpinBox::valueChanged, this, [this](int b) {
        degree_->setMaximum(b);
        apply();
    });
    connect(degree_, &QSpinBox::valueChanged, this, &TuningPanel::apply);
    connect(costs_, &QComboBox::currentIndexChanged, this, &TuningPanel::apply);
    connect(copy_, &QSpinBox::valueChanged, this, &TuningPanel::shownCopyChanged);
    connect(session_, &StudioSession::settingsChanged, this, &TuningPanel::showSettings);
    connect(session_, &StudioSession::modelChanged, this, &TuningPanel::showPassStats);
    connect(session_, &StudioSession::analysisChanged, this, [this] {
        showSettings();
        if (auto a = session_->analysis())
            status_->setText(tr("Planned in %1 (simulated speedup %2)")
                                 .arg(formatSeconds(a->seconds))
                                 .arg(a->plan.simulation.speedup, 0, 'f', 2));
    });
    showSettings();
}

void TuningPanel::showSettings()
{
    updating_ = true;
    const ScheduleSettings& s = session_->settings();
    algorithm_->setCurrentIndex(std::max(0, algorithm_->findData(QString::fromStdString(s.algorithm))));
    workers_->setValue(s.workers);
    batch_->setValue(s.batch);
    degree_->setMaximum(s.batch);
    degree_->setValue(s.degree);
    copy_->setMaximum(s.degree - 1);
    copy_->setEnabled(s.degree > 1);
    costs_->setCurrentIndex(s.measuredCosts ? 1 : 0);
    if (auto* model = qobject_cast<QStandardItemModel*>(costs_->model()))
        model->item(1)->setEnabled(session_->hasMeasuredCosts());
    const auto& selected = session_->passes();
    for (const auto& [name, box] : passes_)
        box->setChecked(passes::findPass(name).scheduling
                            ? s.clone
                            : std::find(selected.begin(), selected.end(), name) != selected.end());
    updating_ = false;
}

QCheckBox* TuningPanel::passBox(const std::string& name) const
{
    for (const auto& [n, box] : passes_)
        if (n == name)
            return box;
    return nullptr;
}

void TuningPanel::applyPasses()
{
    if (updating_)
        return;
    std::vector<std::string> names;
    for (const auto& [name, box] : passes_)
        if (box->isChecked() && !passes::findPass(name).scheduling)
            names.push_back(name);
    session_->setPasses(names);
    showSettings();  // requirements the registry added are checked too
}

void TuningPanel::showPassStats()
{
    auto p = session_->prepared();
    if (!p)
        return;
    QStringList lines;
    if (p->passStats.empty())
        lines << tr("No graph passes: the graph as in the file (%1 nodes).").arg(p->model.graph.nodeCount());
    else
        lines << tr("%1 nodes in the file, %2 after the passes:")
                     .arg(p->source->graph.nodeCount())
                     .arg(p->model.graph.nodeCount());
    for (const auto& [name, stats] : p->passStats)
        lines << tr("%1: %2 -> %3 (%4)")
                     .arg(QString::fromStdString(name))
                     .arg(stats.nodesBefore)
                     .arg(stats.nodesAfter)
                     .arg(QString::fromStdString(stats.detail).toHtmlEscaped());
    passStats_->setText(lines.join(QStringLiteral("<br>")));
}

void TuningPanel::apply()
{
    if (updating_)
        return;
    ScheduleSettings s = session_->settings();
    s.algorithm = algorithm_->currentData().toString().toStdString();
    s.workers = workers_->value();
    s.batch = batch_->value();
    s.degree = std::min(degree_->value(), s.batch);
    s.measuredCosts = costs_->currentIndex() == 1 && session_->hasMeasuredCosts();
    s.clone = cloneBox()->isChecked();
    session_->setSettings(s);
}

}  // namespace ramiel::studio
