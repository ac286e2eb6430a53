#pragma once
// Shared fixture of the ops tests: a test parameterised by backend that skips cleanly (GTEST_SKIP)
// when this CPU cannot run the backend, and comparison helpers built on the library's own
// Equivalence check so a failure prints max abs/rel error, max ULP and the first bad index.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"

namespace brick::ops::test {

class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (const auto missing = missing_feature(GetParam(), cpu_features())) {
      GTEST_SKIP() << "this CPU lacks " << *missing << " for the " << name(GetParam())
                   << " backend";
    }
  }
  Backend backend() const { return GetParam(); }
};

inline std::string backend_param_name(const ::testing::TestParamInfo<Backend>& info) {
  return std::string(name(info.param));
}

// Every concrete backend (hand-computed cases) and the ones compared against Scalar.
inline const std::vector<Backend> kAllBackends = {Backend::Scalar, Backend::Avx2, Backend::Avx512};
inline const std::vector<Backend> kSimdBackends = {Backend::Avx2, Backend::Avx512};

inline AssertionOutcome compare(std::span<const float> actual, std::span<const float> expected,
                                double abs_tolerance, double rel_tolerance) {
  AssertionOutcome outcome;
  check_equivalence(Equivalence{Backend::Scalar, abs_tolerance, rel_tolerance}, actual, expected,
                    outcome);
  return outcome;
}

inline AssertionOutcome compare(std::span<const float> actual, std::span<const float> expected,
                                const Equivalence& tolerance) {
  return compare(actual, expected, tolerance.abs_tolerance, tolerance.rel_tolerance);
}

}  // namespace brick::ops::test

#define BRICK_OPS_INSTANTIATE(fixture, backends)                             \
  INSTANTIATE_TEST_SUITE_P(Backends, fixture, ::testing::ValuesIn(backends), \
                           ::brick::ops::test::backend_param_name)
