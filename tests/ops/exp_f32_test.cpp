// The vectorised exp behind softmax and silu, tested directly through softmax's exp pass
// (exp_shifted with shift 0 is exp itself): its error over the whole float range, its special
// values, and the bound the ops' Equivalence tolerances rely on (at most 2 ulp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "../../src/ops/kernels/f32_kernels.hpp"
#include "brick/core/assertion.hpp"
#include "ops/backend_test.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;
using ExpShifted = double (*)(const float*, float, float*, std::size_t) noexcept;

ExpShifted exp_kernel(Backend backend) {
  return backend == Backend::Avx512 ? kernels::exp_shifted_f32_avx512
                                    : kernels::exp_shifted_f32_avx2;
}

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

class VectorExp : public BackendTest {};

TEST_P(VectorExp, WithinTwoUlpOverTheWholeRange) {
  // Every 61st float of [-104, 89] (about 25 million inputs, both signs, all exponents).
  std::vector<float> x;
  for (std::uint32_t bits = 0; bits < 0x7F800000u; bits += 61) {
    const float v = from_bits(bits);
    if (v <= 89.0f) x.push_back(v);
    if (v <= 104.0f) x.push_back(-v);
  }
  std::vector<float> out(x.size());
  exp_kernel(backend())(x.data(), 0.0f, out.data(), x.size());
  std::uint64_t worst_ulp = 0;
  double worst_abs_denormal = 0.0;
  float worst_at = 0.0f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float expected = static_cast<float>(std::exp(static_cast<double>(x[i])));
    if (std::fabs(expected) < std::numeric_limits<float>::min()) {
      // Denormal results are rounded from a 24-bit p: off by at most one denormal step.
      worst_abs_denormal =
          std::max(worst_abs_denormal, std::fabs(static_cast<double>(out[i]) - expected));
      continue;
    }
    const std::uint64_t ulp = ulp_distance(out[i], expected);
    if (ulp > worst_ulp) {
      worst_ulp = ulp;
      worst_at = x[i];
    }
  }
  EXPECT_LE(worst_ulp, 2u) << "worst at x = " << worst_at;
  EXPECT_LE(worst_abs_denormal, std::numeric_limits<float>::denorm_min());
  RecordProperty("max_ulp", static_cast<int>(worst_ulp));
}

TEST_P(VectorExp, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {0.0f,    -0.0f, -inf,
                                inf,     88.8f, -104.0f,
                                -200.0f, 1.0f,  std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> out(x.size());
  const double sum = exp_kernel(backend())(x.data(), 0.0f, out.data(), x.size());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_FALSE(std::signbit(out[2]));
  EXPECT_EQ(out[3], inf);
  EXPECT_EQ(out[4], inf);   // e^88.8 > FLT_MAX
  EXPECT_EQ(out[5], 0.0f);  // e^-104 < half the smallest denormal
  EXPECT_EQ(out[6], 0.0f);
  EXPECT_NEAR(out[7], 2.7182817f, 3e-7f);
  EXPECT_TRUE(std::isnan(out[8]));
  EXPECT_TRUE(std::isnan(sum));
}

TEST_P(VectorExp, ReturnsTheSumOfWhatItWrote) {
  for (std::size_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 100}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = -0.1f * static_cast<float>(i);
    std::vector<float> out(n + 1, -1.0f);  // one guard element past the end
    const double sum = exp_kernel(backend())(x.data(), 0.5f, out.data(), n);
    double expected = 0.0;
    for (std::size_t i = 0; i < n; ++i) expected += out[i];
    EXPECT_DOUBLE_EQ(sum, expected) << "n = " << n;
    EXPECT_EQ(out[n], -1.0f) << "n = " << n << ": wrote past the end";
  }
}

BRICK_OPS_INSTANTIATE(VectorExp, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
