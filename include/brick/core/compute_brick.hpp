#pragma once
// ComputeBrick: an op with assertions that are really checked, a token budget and a backend chosen
// at run time. run() executes the op into a caller-provided output, times it, checks the assertions
// the policy selects and returns metrics; verify() checks every assertion.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/budget.hpp"
#include "brick/core/error.hpp"
#include "brick/core/op.hpp"
#include "brick/core/run_result.hpp"

namespace brick {

enum class CheckPolicy : unsigned char {
  Cheap,  // Finite, Bounds and Custom on every call (the default): one pass over the output each
  All,    // every assertion on every call, Equivalence included
  None,   // nothing on run(); verify() still checks everything
};

enum class OnFailure : unsigned char {
  Report,  // the outcome is in the RunReport; run() still succeeds
  Error,   // run() returns AssertionFailed with the numbers of the first failing assertion
};

struct BrickPolicy {
  CheckPolicy checks = CheckPolicy::Cheap;
  OnFailure on_failure = OnFailure::Report;
  bool enforce_budget = false;  // when set, a slow call returns BudgetExceeded
};

struct VerifyReport {
  std::string brick;
  Backend backend = Backend::Scalar;
  std::vector<AssertionOutcome> assertions;

  bool passed() const noexcept {
    for (const AssertionOutcome& outcome : assertions) {
      if (!outcome.passed) return false;
    }
    return true;
  }
};

template <BrickOp Op>
class ComputeBrick {
 public:
  using Input = typename Op::Input;

  // Throws InvalidArgument when `assertions` is empty (a brick must check something) or the policy
  // holds a value outside its enums, and BackendUnavailable when `backend` cannot run here. Auto is
  // resolved once, now.
  ComputeBrick(Op op, std::vector<Assertion> assertions, Backend backend = Backend::Auto,
               TokenBudget budget = {}, BrickPolicy policy = {})
      : op_(std::move(op)),
        name_(op_.name()),
        assertions_(std::move(assertions)),
        backend_(resolve(backend)),
        budget_(budget),
        policy_(checked(policy)) {
    if (assertions_.empty()) {
      throw InvalidArgument(
          fmt::format("brick '{}' has no assertions; a brick must check at "
                      "least one (Equivalence, Bounds, Finite or Custom)",
                      name_));
    }
    outcomes_.resize(assertions_.size());
    for (std::size_t i = 0; i < assertions_.size(); ++i) {
      outcomes_[i].name = describe(assertions_[i]);
      outcomes_[i].kind = kind_of(assertions_[i]);
      if (const auto* eq = std::get_if<Equivalence>(&assertions_[i])) resolve(eq->baseline);
    }
  }

  const Op& op() const noexcept { return op_; }
  const std::string& name() const noexcept { return name_; }
  BrickId id() const noexcept { return op_.id(); }
  Backend backend() const noexcept { return backend_; }
  const TokenBudget& budget() const noexcept { return budget_; }
  const BrickPolicy& policy() const noexcept { return policy_; }
  std::span<const Assertion> assertions() const noexcept { return assertions_; }

  void set_budget(TokenBudget budget) noexcept { budget_ = budget; }
  // InvalidArgument for a value outside the policy's enums; the policy is then unchanged.
  void set_policy(BrickPolicy policy) { policy_ = checked(policy); }

  // Executes the op into `out` (exactly output_size(input) floats, else InvalidArgument) and
  // checks the assertions the policy selects. `out` may be the input itself (an in-place op, such
  // as a softmax over its own buffer): with an Equivalence check selected, run() keeps what `out`
  // held before the call and puts it back while the baseline backend runs into scratch space, so the
  // baseline reads the same input the op did; `out` holds the op's result when run() returns.
  // That costs three passes over `out`, and allocates only the first time a check needs scratch
  // space of a new size.
  Result<RunReport> run(const Input& input, std::span<float> out) {
    require_output_size(input, out);
    const OpCost cost = op_.cost(input);
    const bool equivalence_selected = policy_.checks == CheckPolicy::All && has_equivalence();
    if (equivalence_selected) held_before_.assign(out.begin(), out.end());
    const auto start = std::chrono::steady_clock::now();
    op_.run(input, out, backend_);
    const auto stop = std::chrono::steady_clock::now();
    const auto ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());

    RunReport report;
    report.brick = name_;
    report.id = op_.id();
    report.backend = backend_;
    report.metrics = make_metrics(cost.tokens, ns, cost.flops, cost.bytes, budget_.us_per_token());

    if (equivalence_selected) {
      // out gets its old contents back (the input, where they alias) and held_before_ the result,
      // until every check has run.
      std::swap_ranges(out.begin(), out.end(), held_before_.begin());
      const ResultRestorer restore{held_before_, out};
      evaluate_selected(input, held_before_);
    } else {
      evaluate_selected(input, out);
    }
    report.assertions = outcomes_;

    if (policy_.on_failure == OnFailure::Error) {
      for (const AssertionOutcome& outcome : outcomes_) {
        if (outcome.evaluated && !outcome.passed) {
          return tl::make_unexpected(RunError{AssertionFailed{name_, outcome}});
        }
      }
    }
    if (policy_.enforce_budget && !report.metrics.budget_met) {
      return tl::make_unexpected(RunError{BudgetExceeded{
          name_, budget_.us_per_token(), report.metrics.us_per_token, report.metrics.utilisation}});
    }
    return report;
  }

  // Runs the op and checks every assertion, whatever the policy.
  VerifyReport verify(const Input& input) {
    output_.resize(op_.output_size(input));
    op_.run(input, output_, backend_);
    VerifyReport report{name_, backend_, {}};
    for (std::size_t i = 0; i < assertions_.size(); ++i) {
      evaluate(i, input, output_);
      report.assertions.push_back(outcomes_[i]);
    }
    return report;
  }

 private:
  void require_output_size(const Input& input, std::span<const float> out) const {
    const std::size_t expected = op_.output_size(input);
    if (out.size() != expected) {
      throw InvalidArgument(fmt::format("brick '{}': output has {} elements, the op writes {}",
                                        name_, out.size(), expected));
    }
  }

  static const BrickPolicy& checked(const BrickPolicy& policy) {
    if (policy.checks != CheckPolicy::Cheap && policy.checks != CheckPolicy::All &&
        policy.checks != CheckPolicy::None) {
      throw InvalidArgument(fmt::format("BrickPolicy: {} is not a CheckPolicy", static_cast<int>(policy.checks)));
    }
    if (policy.on_failure != OnFailure::Report && policy.on_failure != OnFailure::Error) {
      throw InvalidArgument(fmt::format("BrickPolicy: {} is not an OnFailure", static_cast<int>(policy.on_failure)));
    }
    return policy;
  }

  bool has_equivalence() const noexcept {
    for (const Assertion& assertion : assertions_) {
      if (std::holds_alternative<Equivalence>(assertion)) return true;
    }
    return false;
  }

  // Copies the result saved in `result` back into `out` when the checks end, however they end.
  struct ResultRestorer {
    const std::vector<float>& result;
    std::span<float> out;
    ~ResultRestorer() { std::copy(result.begin(), result.end(), out.begin()); }
  };

  void evaluate_selected(const Input& input, std::span<const float> out) {
    for (std::size_t i = 0; i < assertions_.size(); ++i) {
      const bool selected = policy_.checks == CheckPolicy::All ||
                            (policy_.checks == CheckPolicy::Cheap && is_cheap(assertions_[i]));
      if (selected) {
        evaluate(i, input, out);
      } else {
        outcomes_[i].evaluated = false;
      }
    }
  }

  void evaluate(std::size_t i, const Input& input, std::span<const float> out) {
    AssertionOutcome& outcome = outcomes_[i];
    struct Checker {
      ComputeBrick& self;
      const Input& input;
      std::span<const float> out;
      AssertionOutcome& outcome;
      void operator()(const Equivalence& eq) {
        self.baseline_.resize(out.size());
        self.op_.run(input, self.baseline_, resolve(eq.baseline));
        check_equivalence(eq, out, self.baseline_, outcome);
      }
      void operator()(const Bounds& bounds) { check_bounds(bounds, out, outcome); }
      void operator()(const Finite&) { check_finite(out, outcome); }
      void operator()(const Custom& custom) { check_custom(custom, out, outcome); }
    };
    std::visit(Checker{*this, input, out, outcome}, assertions_[i]);
  }

  Op op_;
  std::string name_;
  std::vector<Assertion> assertions_;
  std::vector<AssertionOutcome> outcomes_;
  std::vector<float> baseline_;
  std::vector<float> held_before_;  // run(): out's contents before the op, then the op's result
  std::vector<float> output_;
  Backend backend_;
  TokenBudget budget_;
  BrickPolicy policy_;
};

}  // namespace brick
