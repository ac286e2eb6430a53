#pragma once
// What running a brick returns: the metrics of the call and the assertions it checked, or a typed
// failure (an assertion that failed under the Error policy, or a budget exceeded under
// enforcement).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <variant>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"

namespace brick {

struct RunMetrics {
  std::uint64_t tokens = 0;
  std::uint64_t ns = 0;
  double flops = 0.0;
  double bytes = 0.0;
  double us_per_token = 0.0;
  double tokens_per_second = 0.0;
  double budget_us_per_token = 0.0;
  bool budget_met = true;
  double utilisation = 0.0;  // actual / budget time per token
  double gflops_per_second = 0.0;
  double gb_per_second = 0.0;
};

// Metrics for a call of `ns` nanoseconds doing `tokens`, `flops` and `bytes` against a budget.
RunMetrics make_metrics(std::uint64_t tokens, std::uint64_t ns, double flops, double bytes,
                        double budget_us_per_token) noexcept;

struct RunReport {
  std::string_view brick;  // the brick's name; valid while the brick lives
  BrickId id = BrickId::COUNT;
  Backend backend = Backend::Scalar;
  RunMetrics metrics;
  // Outcomes of every assertion of the brick, in order; those the policy skipped on this call have
  // evaluated == false. Points into the brick and is overwritten by its next run.
  std::span<const AssertionOutcome> assertions;

  bool passed() const noexcept;
};

struct AssertionFailed {
  std::string brick;
  AssertionOutcome outcome;

  std::string message() const;
};

struct BudgetExceeded {
  std::string brick;
  double limit_us = 0.0;   // budget, µs per token
  double actual_us = 0.0;  // measured, µs per token
  double utilisation = 0.0;

  std::string message() const;
};

using RunError = std::variant<AssertionFailed, BudgetExceeded>;

std::string message(const RunError& error);

template <class T>
using Result = tl::expected<T, RunError>;

}  // namespace brick
