#pragma once
// Assertions a brick checks on its output. Each is evaluated for real and reports numbers, not only
// pass/fail: the worst absolute and relative error, the worst ULP distance, the first offending
// index.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <variant>

#include "brick/core/backend.hpp"

namespace brick {

// Re-runs the op on `baseline` and compares element-wise. Element i passes when
// |out[i] - base[i]| <= abs_tolerance + rel_tolerance * |base[i]|; two NaNs, or two infinities of
// the same sign, are equal.
struct Equivalence {
  Backend baseline = Backend::Scalar;
  double abs_tolerance = 1e-5;
  double rel_tolerance = 1e-5;
};

// Every element lies in [min, max]; NaN fails.
struct Bounds {
  float min;
  float max;
};

// No NaN and no infinity.
struct Finite {};

// A named predicate over the whole output.
struct Custom {
  std::string name;
  std::function<bool(std::span<const float>)> predicate;
};

using Assertion = std::variant<Equivalence, Bounds, Finite, Custom>;

enum class AssertionKind : std::uint8_t { Equivalence, Bounds, Finite, Custom };

std::string_view name(AssertionKind kind) noexcept;
AssertionKind kind_of(const Assertion& assertion) noexcept;

// Finite, Bounds and Custom look only at the output (a Custom predicate is the caller's to keep to
// about one pass over it), so CheckPolicy::Cheap runs them on every call; Equivalence re-runs the op.
bool is_cheap(const Assertion& assertion) noexcept;

// "equivalence(avx2 vs scalar, abs 1e-05, rel 1e-05)", "bounds[-1, 1]", "finite", "custom:name".
std::string describe(const Assertion& assertion);

struct AssertionOutcome {
  std::string name;  // describe() of the assertion
  AssertionKind kind = AssertionKind::Finite;
  bool evaluated = false;  // false when the policy skipped it on this call
  bool passed = true;
  std::size_t violations = 0;  // elements that failed
  std::optional<std::size_t> first_bad_index;
  float first_bad_value = 0.0f;
  float first_bad_expected = 0.0f;  // Equivalence only: the baseline's value there
  double max_abs_error = 0.0;       // Equivalence only
  double max_rel_error = 0.0;       // Equivalence only
  std::uint64_t max_ulp = 0;        // Equivalence only

  // "passed", "skipped", or the numbers of a failure, for reports.
  std::string summary() const;
};

// Distance in units in the last place between two floats (0 for equal values, including +0/-0;
// the maximum for NaN against a number).
std::uint64_t ulp_distance(float a, float b) noexcept;

// The checks themselves, usable without a brick. Each fills the numeric fields of `outcome` and
// sets evaluated and passed; names are left as they are.
void check_equivalence(const Equivalence& eq, std::span<const float> actual,
                       std::span<const float> expected, AssertionOutcome& outcome) noexcept;
void check_bounds(const Bounds& bounds, std::span<const float> actual,
                  AssertionOutcome& outcome) noexcept;
void check_finite(std::span<const float> actual, AssertionOutcome& outcome) noexcept;
void check_custom(const Custom& custom, std::span<const float> actual, AssertionOutcome& outcome);

}  // namespace brick
