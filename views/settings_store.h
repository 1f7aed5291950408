// Studio's plan settings in QSettings, one key per option of the core's
// table (group "plan"), so that a restart finds them as they were.
#pragma once

#include "core/pipeline/options.h"

class QSettings;

namespace ramiel::studio {

// The stored options over `defaults` (options never stored keep their default).
pipeline::PlanSettings loadPlanSettings(QSettings& settings, pipeline::PlanSettings defaults);
// Stores the options Studio shows (those with a label in the table).
void savePlanSettings(QSettings& settings, const pipeline::PlanSettings& plan);

}  // namespace ramiel::studio
