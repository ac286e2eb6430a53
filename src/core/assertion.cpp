#include "brick/core/assertion.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace brick {
namespace {

void reset_numbers(AssertionOutcome& outcome) noexcept {
  outcome.evaluated = true;
  outcome.passed = true;
  outcome.violations = 0;
  outcome.first_bad_index.reset();
  outcome.first_bad_value = 0.0f;
  outcome.first_bad_expected = 0.0f;
  outcome.max_abs_error = 0.0;
  outcome.max_rel_error = 0.0;
  outcome.max_ulp = 0;
}

void record_violation(AssertionOutcome& outcome, std::size_t i, float value) noexcept {
  if (!outcome.first_bad_index) {
    outcome.first_bad_index = i;
    outcome.first_bad_value = value;
  }
  ++outcome.violations;
  outcome.passed = false;
}

// The values `bad` holds for, counted in a branch-free pass that the compiler vectorizes (the cheap
// checks run on every call, over every output); the first of them is looked for only when there is
// one.
template <class Bad>
void record_violations(std::span<const float> actual, AssertionOutcome& outcome, Bad bad) noexcept {
  std::size_t count = 0;
  for (const float x : actual) count += bad(x) ? 1 : 0;
  if (count == 0) return;
  const auto first = std::find_if(actual.begin(), actual.end(), bad);
  outcome.first_bad_index = static_cast<std::size_t>(first - actual.begin());
  outcome.first_bad_value = *first;
  outcome.violations = count;
  outcome.passed = false;
}

// Maps a float's bits onto a line where adjacent floats are adjacent integers.
std::int64_t ordered(float x) noexcept {
  const auto bits = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(x));
  return bits < 0 ? std::int64_t{std::numeric_limits<std::int32_t>::min()} - bits : bits;
}

}  // namespace

std::string_view name(AssertionKind kind) noexcept {
  switch (kind) {
    case AssertionKind::Equivalence:
      return "equivalence";
    case AssertionKind::Bounds:
      return "bounds";
    case AssertionKind::Finite:
      return "finite";
    case AssertionKind::Custom:
      return "custom";
  }
  return "unknown";
}

AssertionKind kind_of(const Assertion& assertion) noexcept {
  return static_cast<AssertionKind>(assertion.index());
}

bool is_cheap(const Assertion& assertion) noexcept {
  return !std::holds_alternative<Equivalence>(assertion);
}

std::string describe(const Assertion& assertion) {
  struct Describer {
    std::string operator()(const Equivalence& e) const {
      return fmt::format("equivalence(vs {}, abs {:g}, rel {:g})", name(e.baseline),
                         e.abs_tolerance, e.rel_tolerance);
    }
    std::string operator()(const Bounds& b) const {
      return fmt::format("bounds[{:g}, {:g}]", b.min, b.max);
    }
    std::string operator()(const Finite&) const { return "finite"; }
    std::string operator()(const Custom& c) const { return "custom:" + c.name; }
  };
  return std::visit(Describer{}, assertion);
}

std::string AssertionOutcome::summary() const {
  if (!evaluated) return "skipped";
  if (kind == AssertionKind::Equivalence) {
    const std::string numbers = fmt::format("max abs {:.3g}, max rel {:.3g}, max ulp {}",
                                            max_abs_error, max_rel_error, max_ulp);
    if (passed) return "passed (" + numbers + ")";
    return fmt::format("FAILED: {} of the outputs differ, first at [{}]: {:g} vs {:g}; {}",
                       violations, *first_bad_index, first_bad_value, first_bad_expected, numbers);
  }
  if (passed) return "passed";
  if (!first_bad_index) return "FAILED";
  return fmt::format("FAILED: {} bad elements, first at [{}] = {:g}", violations, *first_bad_index,
                     first_bad_value);
}

std::uint64_t ulp_distance(float a, float b) noexcept {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) ? 0 : std::numeric_limits<std::uint64_t>::max();
  }
  const std::int64_t d = ordered(a) - ordered(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

void check_equivalence(const Equivalence& eq, std::span<const float> actual,
                       std::span<const float> expected, AssertionOutcome& outcome) noexcept {
  reset_numbers(outcome);
  if (actual.size() != expected.size()) {
    outcome.passed = false;
    outcome.violations = std::max(actual.size(), expected.size());
    outcome.first_bad_index = std::min(actual.size(), expected.size());
    return;
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const float a = actual[i];
    const float e = expected[i];
    const bool both_nan = std::isnan(a) && std::isnan(e);
    const bool same_inf = std::isinf(a) && std::isinf(e) && std::signbit(a) == std::signbit(e);
    if (both_nan || same_inf) continue;
    const double abs_error = std::fabs(static_cast<double>(a) - static_cast<double>(e));
    const double magnitude = std::fabs(static_cast<double>(e));
    const double rel_error = magnitude > 0 ? abs_error / magnitude : (abs_error > 0 ? INFINITY : 0);
    // Past the equal special values above, a non-finite value on either side is a mismatch.
    const bool close = std::isfinite(a) && std::isfinite(e) &&
                       abs_error <= eq.abs_tolerance + eq.rel_tolerance * magnitude;
    if (!(abs_error <= outcome.max_abs_error)) outcome.max_abs_error = abs_error;
    if (!(rel_error <= outcome.max_rel_error)) outcome.max_rel_error = rel_error;
    outcome.max_ulp = std::max(outcome.max_ulp, ulp_distance(a, e));
    if (!close) {
      if (!outcome.first_bad_index) outcome.first_bad_expected = e;
      record_violation(outcome, i, a);
    }
  }
}

void check_bounds(const Bounds& bounds, std::span<const float> actual,
                  AssertionOutcome& outcome) noexcept {
  reset_numbers(outcome);
  record_violations(actual, outcome, [&](float x) { return !(x >= bounds.min && x <= bounds.max); });
}

void check_finite(std::span<const float> actual, AssertionOutcome& outcome) noexcept {
  reset_numbers(outcome);
  record_violations(actual, outcome, [](float x) { return !(std::fabs(x) <= std::numeric_limits<float>::max()); });
}

void check_custom(const Custom& custom, std::span<const float> actual, AssertionOutcome& outcome) {
  reset_numbers(outcome);
  outcome.passed = custom.predicate && custom.predicate(actual);
  if (!outcome.passed) outcome.violations = 1;
}

}  // namespace brick
