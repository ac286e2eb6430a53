#include "brick/ops/rope.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "brick/core/error.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

// Indices of pair i's two elements within a head.
std::pair<std::size_t, std::size_t> pair_of(std::size_t i, std::size_t head_dim,
                                            RopeLayout layout) {
  return layout == RopeLayout::Normal ? std::pair{2 * i, 2 * i + 1}
                                      : std::pair{i, i + head_dim / 2};
}

// The textbook formula in double: theta_i = position * base^(-2i/d).
std::vector<double> rope_in_double(std::span<const float> x, const RopeParams& params) {
  std::vector<double> out(x.begin(), x.end());
  const std::size_t d = params.head_dim;
  for (std::size_t h = 0; h < x.size() / d; ++h) {
    for (std::size_t i = 0; i < d / 2; ++i) {
      const double theta = static_cast<double>(params.position) *
                           std::pow(static_cast<double>(params.freq_base), -2.0 * i / d);
      const auto [a, b] = pair_of(i, d, params.layout);
      const double xa = x[h * d + a];
      const double xb = x[h * d + b];
      out[h * d + a] = xa * std::cos(theta) - xb * std::sin(theta);
      out[h * d + b] = xa * std::sin(theta) + xb * std::cos(theta);
    }
  }
  return out;
}

class RopeTest : public BackendTest {};
class RopeVersusScalar : public BackendTest {};

constexpr RopeLayout kLayouts[] = {RopeLayout::Normal, RopeLayout::NeoX};

TEST_P(RopeTest, PositionZeroIsTheIdentity) {
  for (RopeLayout layout : kLayouts) {
    const std::vector<float> x = brick::test::normal(3 * 64, 1);
    std::vector<float> out(x.size());
    rope(x, RopeParams{64, 0, 10000.0f, layout}, out, backend());
    EXPECT_EQ(out, x);
  }
}

TEST_P(RopeTest, HandComputedLayoutsPairDifferentElements) {
  // head_dim 4, position 1, base 10000: theta_0 = 1, theta_1 = 10000^(-1/2) = 0.01.
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
  const double c0 = std::cos(1.0), s0 = std::sin(1.0), c1 = std::cos(0.01), s1 = std::sin(0.01);
  std::vector<float> out(4);
  rope(x, RopeParams{4, 1, 10000.0f, RopeLayout::Normal}, out, backend());
  const double normal[] = {1 * c0 - 2 * s0, 1 * s0 + 2 * c0, 3 * c1 - 4 * s1, 3 * s1 + 4 * c1};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(out[i], normal[i], 1e-6) << "normal " << i;
  rope(x, RopeParams{4, 1, 10000.0f, RopeLayout::NeoX}, out, backend());
  const double neox[] = {1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 1 * s0 + 3 * c0, 2 * s1 + 4 * c1};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(out[i], neox[i], 1e-6) << "neox " << i;
}

TEST_P(RopeTest, MatchesTheDoublePrecisionFormula) {
  for (RopeLayout layout : kLayouts) {
    for (std::size_t head_dim : {2, 6, 16, 64, 80, 128, 130, 600}) {
      for (std::size_t position : {1, 7, 100, 4095}) {
        for (float base : {10000.0f, 500000.0f}) {
          const RopeParams params{head_dim, position, base, layout};
          const std::vector<float> x = brick::test::normal(3 * head_dim, head_dim + position);
          std::vector<float> out(x.size());
          rope(x, params, out, backend());
          const std::vector<double> expected = rope_in_double(x, params);
          // ggml forms theta_i with i + 1 float multiplies by a powf result (each within an ulp),
          // so theta_i is off by up to (2i + 3) ulp of itself; cos/sin add an ulp, the rotation
          // two.
          for (std::size_t j = 0; j < x.size(); ++j) {
            const std::size_t within = j % head_dim;
            const std::size_t i =
                layout == RopeLayout::Normal ? within / 2 : within % (head_dim / 2);
            const auto [a, b] = pair_of(i, head_dim, layout);
            const std::size_t head = j - within;
            const double magnitude = std::fabs(x[head + a]) + std::fabs(x[head + b]);
            const double theta =
                position * std::pow(static_cast<double>(base), -2.0 * i / head_dim);
            const double bound = magnitude * (theta * (2 * i + 3) + 4) * std::ldexp(1.0, -24);
            ASSERT_NEAR(out[j], expected[j], bound)
                << "head_dim " << head_dim << " position " << position << " base " << base
                << " layout " << static_cast<int>(layout) << " j " << j;
          }
        }
      }
    }
  }
}

TEST_P(RopeTest, InPlace) {
  for (RopeLayout layout : kLayouts) {
    std::vector<float> x = brick::test::normal(4 * 128, 2);
    std::vector<float> expected(x.size());
    const RopeParams params{128, 33, 10000.0f, layout};
    rope(x, params, expected, backend());
    rope(x, params, x, backend());
    EXPECT_EQ(x, expected);
  }
}

TEST_P(RopeTest, BadArgumentsThrow) {
  std::vector<float> x(12);
  std::vector<float> out(12);
  std::vector<float> none;
  EXPECT_THROW(rope(x, RopeParams{0, 1}, out, backend()), InvalidArgument);
  EXPECT_THROW(rope(x, RopeParams{3, 1}, out, backend()), InvalidArgument);  // odd
  EXPECT_THROW(rope(x, RopeParams{8, 1}, out, backend()), InvalidArgument);  // 12 % 8 != 0
  EXPECT_THROW(rope(none, RopeParams{4, 1}, none, backend()), InvalidArgument);
  EXPECT_THROW(rope(x, RopeParams{4, 1, 0.0f}, out, backend()), InvalidArgument);
  EXPECT_THROW(rope(x, RopeParams{4, 1, std::numeric_limits<float>::infinity()}, out, backend()),
               InvalidArgument);
  std::vector<float> eight(8);
  EXPECT_THROW(rope(x, RopeParams{4, 1}, eight, backend()), InvalidArgument);
  std::vector<float> buffer(16);
  const std::span<float> whole(buffer);
  EXPECT_THROW(rope(whole.first(8), RopeParams{4, 1}, whole.subspan(4, 8), backend()),
               InvalidArgument);
}

TEST_P(RopeVersusScalar, BitIdenticalOnRandomAndAdversarialInputs) {
  for (RopeLayout layout : kLayouts) {
    for (std::size_t head_dim : {2, 4, 14, 16, 18, 32, 34, 64, 96, 128, 256, 1026}) {
      for (std::size_t position : {0, 1, 17, 1000, 32767}) {
        const std::size_t n = 3 * head_dim;
        for (const auto& pattern : brick::test::adversarial_patterns(n, head_dim + position)) {
          const RopeParams params{head_dim, position, 10000.0f, layout};
          std::vector<float> expected(n);
          std::vector<float> actual(n);
          rope(pattern.values, params, expected, Backend::Scalar);
          rope(pattern.values, params, actual, backend());
          const AssertionOutcome outcome = test::compare(actual, expected, RopeOp::equivalence());
          ASSERT_TRUE(outcome.passed) << pattern.name << " head_dim " << head_dim << " position "
                                      << position << ": " << outcome.summary();
        }
      }
    }
  }
}

BRICK_OPS_INSTANTIATE(RopeTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(RopeVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
