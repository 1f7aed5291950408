// The passes' factories; registry.cpp puts them in order.
#pragma once

#include "core/passes/pass.h"

#include <memory>

namespace ramiel::passes {

std::unique_ptr<Pass> makeEliminateIdentityPass();
std::unique_ptr<Pass> makeFoldConstantsPass();
std::unique_ptr<Pass> makeDeadCodePass();
std::unique_ptr<Pass> makeFusePadPass();
std::unique_ptr<Pass> makeFuseConvBatchNormPass();
std::unique_ptr<Pass> makeFuseConvActivationPass();
std::unique_ptr<Pass> makeSplitConcatConvPass();
std::unique_ptr<Pass> makeFuseBatchNormPass();
std::unique_ptr<Pass> makeFuseGroupNormPass();
std::unique_ptr<Pass> makeFuseMatMulAddPass();
std::unique_ptr<Pass> makeFuseGeluPass();
std::unique_ptr<Pass> makeFuseLayerNormPass();
std::unique_ptr<Pass> makeFuseSiluPass();
std::unique_ptr<Pass> makeFuseHardSwishPass();
std::unique_ptr<Pass> makeFuseChannelShufflePass();
std::unique_ptr<Pass> makeQuantizePass();

}  // namespace ramiel::passes
