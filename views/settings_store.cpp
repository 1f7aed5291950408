#include "settings_store.h"

#include <QSettings>

#include <algorithm>
#include <type_traits>

namespace ramiel::studio {

namespace {

QString keyOf(const pipeline::PlanOption& option) { return QStringLiteral("plan/") + QString::fromStdString(option.name); }

}  // namespace

pipeline::PlanSettings loadPlanSettings(QSettings& settings, pipeline::PlanSettings defaults)
{
    pipeline::PlanSettings s = defaults;
    for (const pipeline::PlanOption& option : pipeline::planOptions()) {
        const QVariant stored = settings.value(keyOf(option));
        if (option.label.empty() || !stored.isValid())
            continue;
        std::visit(
            [&](auto field) {
                using T = std::remove_reference_t<decltype(s.*field)>;
                if constexpr (std::is_same_v<T, bool>) {
                    s.*field = stored.toBool();
                } else if constexpr (std::is_same_v<T, int>) {
                    bool ok = false;
                    const int v = stored.toInt(&ok);
                    if (ok)
                        s.*field = std::clamp(v, std::max(1, option.minimum), option.maximum);
                } else if constexpr (std::is_same_v<T, std::string>) {
                    const std::string v = stored.toString().toStdString();
                    if (option.choices.empty() ||
                        std::find(option.choices.begin(), option.choices.end(), v) != option.choices.end())
                        s.*field = v;
                }
            },
            option.field);
    }
    s.degree = std::min(s.degree, s.batch);
    return s;
}

void savePlanSettings(QSettings& settings, const pipeline::PlanSettings& plan)
{
    for (const pipeline::PlanOption& option : pipeline::planOptions()) {
        if (option.label.empty())
            continue;
        std::visit(
            [&](auto field) {
                using T = std::remove_cv_t<std::remove_reference_t<decltype(plan.*field)>>;
                if constexpr (std::is_same_v<T, std::string>)
                    settings.setValue(keyOf(option), QString::fromStdString(plan.*field));
                else if constexpr (!std::is_same_v<T, double>)
                    settings.setValue(keyOf(option), plan.*field);
            },
            option.field);
    }
}

}  // namespace ramiel::studio
