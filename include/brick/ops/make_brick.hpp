#pragma once
// Wraps an op as a ComputeBrick with the standard assertions: Equivalence against the Scalar
// reference with the op's own justified tolerance (Op::equivalence()), and Finite.
#include <concepts>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/budget.hpp"
#include "brick/core/compute_brick.hpp"
#include "brick/core/op.hpp"

namespace brick::ops {

// An op that knows how closely its backends must agree with the Scalar reference.
template <class Op>
concept VerifiableOp = BrickOp<Op> && requires {
  { Op::equivalence() } -> std::same_as<Equivalence>;
};

// By default run() checks Finite on every call and verify() also checks Equivalence; pass
// BrickPolicy{CheckPolicy::All} to re-run the reference on every call.
template <VerifiableOp Op>
ComputeBrick<Op> make_brick(Op op, Backend backend = Backend::Auto, TokenBudget budget = {},
                            BrickPolicy policy = {}) {
  return ComputeBrick<Op>(std::move(op), {Op::equivalence(), Finite{}}, backend, budget, policy);
}

}  // namespace brick::ops
