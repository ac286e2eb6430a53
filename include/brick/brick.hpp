#pragma once
// Umbrella header: everything public in Brick.
#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"
#include "brick/core/brick_layer.hpp"
#include "brick/core/budget.hpp"
#include "brick/core/compute_brick.hpp"
#include "brick/core/cpu_features.hpp"
#include "brick/core/error.hpp"
#include "brick/core/op.hpp"
#include "brick/core/run_result.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/runtime/batch/balance211.hpp"
