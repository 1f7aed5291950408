// Whether a BatchNormalization node trains: normalizes by its batch's own
// statistics and updates the running ones. The runtime's kernel, the passes that
// fold BatchNormalization into its neighbours and code generation read it here.
#pragma once

#include "core/ir/graph.h"

namespace ramiel {

// From opset 14 the training_mode attribute (0, the default, is inference). In
// opsets 7-13 a node with more than one output trains ("Output case #1: Y, mean,
// var, saved_mean, saved_var (training mode)"); before opset 7 one with those
// outputs and is_test 0.
bool batchNormTrains(const Node& n);

}  // namespace ramiel
