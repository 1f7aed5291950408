#pragma once

#include "core/analysis/machine.h"

namespace ramiel {

// The probes behind Runtime::calibrate (about a quarter of a second).
CalibrationDetail calibrateWithATen();

}  // namespace ramiel
