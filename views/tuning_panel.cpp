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
#include <type_traits>

namespace ramiel::studio {

namespace {

// The spin boxes' ceilings: a GUI needs no 65,536 workers.
constexpr int kMaxWorkers = 64;
constexpr int kMaxBatch = 256;

}  // namespace

TuningPanel::TuningPanel(StudioSession* session, QWidget* parent)
    : QWidget(parent), session_(session), costs_(new QComboBox(this)), passStats_(new QLabel(this)),
      copy_(new QSpinBox(this)), status_(new QLabel(this))
{
    auto* form = new QFormLayout;
    for (const pipeline::PlanOption& option : pipeline::planOptions()) {
        if (option.label.empty())
            continue;
        QWidget* w = makeOptionWidget(option);
        w->setToolTip(QString::fromStdString(option.help));
        options_.emplace_back(&option, w);
        // Spin boxes and combo boxes take a label beside them; a check box carries its own.
        if (qobject_cast<QCheckBox*>(w))
            form->addRow(w);
        else
            form->addRow(QString::fromStdString(option.label), w);
        if (option.name == "degree")
            form->addRow(tr("S&hown copy"), copy_);
    }
    costs_->addItem(tr("Static (cost model)"));
    costs_->addItem(tr("Measured (last run)"));
    costs_->setToolTip(tr("Node costs for scheduling: the calibrated cost model, or the profile of the last run"));
    form->addRow(tr("&Costs"), costs_);
    copy_->setRange(0, 0);
    copy_->setToolTip(tr("With d > 1 the batch runs as d graph copies: the copy whose clusters the graph shows"));
    status_->setWordWrap(true);
    status_->setTextFormat(Qt::PlainText);  // node names are shown as they are
    status_->setForegroundRole(QPalette::PlaceholderText);

    auto* passBox = new QGroupBox(tr("Passes"), this);
    auto* passLayout = new QVBoxLayout(passBox);
    for (const passes::PassInfo& info : passes::registeredPasses()) {
        auto* box = new QCheckBox(QString::fromStdString(info.name), passBox);
        box->setToolTip(QString::fromStdString(info.summary));
        passLayout->addWidget(box);
        passes_.emplace_back(info.name, box);
        connect(box, &QCheckBox::toggled, this, &TuningPanel::applyPasses);
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

    connect(costs_, &QComboBox::currentIndexChanged, this, &TuningPanel::apply);
    connect(copy_, &QSpinBox::valueChanged, this, &TuningPanel::shownCopyChanged);
    connect(session_, &StudioSession::settingsChanged, this, &TuningPanel::showSettings);
    connect(session_, &StudioSession::modelChanged, this, &TuningPanel::showPassStats);
    connect(session_, &StudioSession::analysisChanged, this, [this] {
        showSettings();
        auto a = session_->analysis();
        if (a && session_->shownConfig())
            status_->setText(tr("Showing %1 as given (Tune or --config), simulated speedup %2 with these costs; "
                                "any change plans again")
                                 .arg(QString::fromStdString(session_->shownConfig()->label()))
                                 .arg(a->plan.simulation.speedup, 0, 'f', 2));
        else if (a)
            status_->setText(
                a->metrics.costsComplete()
                    ? tr("Planned in %1 (simulated speedup %2)")
                          .arg(formatSeconds(a->seconds))
                          .arg(a->plan.simulation.speedup, 0, 'f', 2)
                : a->metrics.unknownCosts != GraphMetrics::UnknownCosts::InputSizes
                    ? tr("Planned in %1; %n node(s) have no cost, %2 (e.g. %3): the simulated figures mean "
                         "nothing until they are measured (Run, then Use as measured costs)",
                         "", int(a->metrics.unknownCostNodes.size()))
                          .arg(formatSeconds(a->seconds),
                               a->metrics.unknownCosts == GraphMetrics::UnknownCosts::DataDependent
                                   ? tr("their sizes depending on the data")
                                   : tr("shape inference giving no sizes"),
                               QString::fromStdString(
                                   a->prepared->model.graph.node(a->metrics.unknownCostNodes.front()).name))
                    : tr("Planned in %1; %n node(s) have no cost (sizes unknown): the simulated figures mean "
                         "nothing until the input sizes are set (Input Sizes)",
                         "", int(a->metrics.unknownCostNodes.size()))
                          .arg(formatSeconds(a->seconds)));
    });
    showSettings();
}

// A combo box for options with choices, a spin box for numbers, a check box for switches.
QWidget* TuningPanel::makeOptionWidget(const pipeline::PlanOption& option)
{
    QWidget* made = nullptr;
    std::visit(
        [&](auto field) {
            using T = std::remove_reference_t<decltype(PlanSettings{}.*field)>;
            if constexpr (std::is_same_v<T, bool>) {
                auto* box = new QCheckBox(QString::fromStdString(option.label), this);
                connect(box, &QCheckBox::toggled, this, &TuningPanel::apply);
                made = box;
            } else if constexpr (std::is_same_v<T, int>) {
                auto* spin = new QSpinBox(this);
                const int ceiling = option.name == "workers" ? kMaxWorkers : kMaxBatch;
                spin->setRange(std::max(1, option.minimum), std::min(option.maximum, ceiling));
                connect(spin, &QSpinBox::valueChanged, this, &TuningPanel::apply);
                made = spin;
            } else if constexpr (std::is_same_v<T, std::string>) {
                auto* combo = new QComboBox(this);
                for (const std::string& c : option.choices)
                    combo->addItem(QString::fromStdString(c), QString::fromStdString(c));
                if (option.name == "algorithm")
                    for (const SchedulerInfo& s : schedulers())
                        combo->setItemData(combo->findData(QString::fromStdString(s.name)),
                                           QString::fromStdString(s.summary), Qt::ToolTipRole);
                connect(combo, &QComboBox::currentIndexChanged, this, &TuningPanel::apply);
                made = combo;
            }
        },
        option.field);
    return made;
}

QWidget* TuningPanel::optionWidget(const std::string& name) const
{
    for (const auto& [option, w] : options_)
        if (option->name == name)
            return w;
    return nullptr;
}

QComboBox* TuningPanel::algorithmBox() const { return qobject_cast<QComboBox*>(optionWidget("algorithm")); }
QSpinBox* TuningPanel::workersBox() const { return qobject_cast<QSpinBox*>(optionWidget("workers")); }
QSpinBox* TuningPanel::batchBox() const { return qobject_cast<QSpinBox*>(optionWidget("batch")); }
QSpinBox* TuningPanel::degreeBox() const { return qobject_cast<QSpinBox*>(optionWidget("degree")); }
QCheckBox* TuningPanel::cloneBox() const { return qobject_cast<QCheckBox*>(optionWidget("clone")); }

void TuningPanel::showSettings()
{
    updating_ = true;
    PlanSettings s = session_->settings();
    for (const auto& [option, w] : options_)
        std::visit(
            [&, w = w](auto field) {
                using T = std::remove_reference_t<decltype(s.*field)>;
                if constexpr (std::is_same_v<T, bool>)
                    qobject_cast<QCheckBox*>(w)->setChecked(s.*field);
                else if constexpr (std::is_same_v<T, int>)
                    qobject_cast<QSpinBox*>(w)->setValue(s.*field);
                else if constexpr (std::is_same_v<T, std::string>) {
                    auto* combo = qobject_cast<QComboBox*>(w);
                    combo->setCurrentIndex(std::max(0, combo->findData(QString::fromStdString(s.*field))));
                }
            },
            option->field);
    degreeBox()->setMaximum(s.batch);  // d <= B
    degreeBox()->setValue(s.degree);
    copy_->setMaximum(s.degree - 1);
    copy_->setEnabled(s.degree > 1);
    costs_->setCurrentIndex(s.costs == "measured" ? 1 : 0);
    if (auto* model = qobject_cast<QStandardItemModel*>(costs_->model()))
        model->item(1)->setEnabled(session_->hasMeasuredCosts());
    const auto& selected = session_->passes();
    for (const auto& [name, box] : passes_)
        box->setChecked(std::find(selected.begin(), selected.end(), name) != selected.end());
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
        if (box->isChecked())
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
    PlanSettings s = session_->settings();
    for (const auto& [option, w] : options_)
        std::visit(
            [&, w = w](auto field) {
                using T = std::remove_reference_t<decltype(s.*field)>;
                if constexpr (std::is_same_v<T, bool>)
                    s.*field = qobject_cast<QCheckBox*>(w)->isChecked();
                else if constexpr (std::is_same_v<T, int>)
                    s.*field = qobject_cast<QSpinBox*>(w)->value();
                else if constexpr (std::is_same_v<T, std::string>)
                    s.*field = qobject_cast<QComboBox*>(w)->currentData().toString().toStdString();
            },
            option->field);
    s.degree = std::min(s.degree, s.batch);
    s.costs = costs_->currentIndex() == 1 && session_->hasMeasuredCosts() ? "measured" : "static";
    session_->setSettings(s);
}

}  // namespace ramiel::studio
