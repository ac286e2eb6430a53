#include "brick/model/decoder_layer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "brick/core/error.hpp"
#include "support/random_data.hpp"

namespace brick::model {
namespace {

const DecoderShape kSmall{64, 4, 2, 96, 24};

// The layer written out plainly in double precision: the oracle the bricks must agree with.
std::vector<double> reference_layer(const DecoderShape& s, const DecoderWeights& w,
                                    std::span<const float> x, std::size_t position, float eps,
                                    float base) {
  const auto matvec = [](std::span<const float> m, std::size_t rows, std::size_t cols,
                         const std::vector<double>& v) {
    std::vector<double> y(rows, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) y[r] += double{m[r * cols + c]} * v[c];
    }
    return y;
  };
  const auto rms_norm = [eps](const std::vector<double>& v, std::span<const float> weight) {
    double sum = 0;
    for (double e : v) sum += e * e;
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(v.size()) + eps);
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i] * scale * weight[i];
    return out;
  };
  const std::size_t hd = s.head_dim(), ctx = s.context, group = s.n_heads / s.n_kv_heads;
  std::vector<double> input(x.begin(), x.end());
  std::vector<double> qkv = matvec(w.wqkv, s.qkv_rows(), s.hidden, rms_norm(input, w.attn_norm));
  for (std::size_t head = 0; head < s.n_heads + s.n_kv_heads; ++head) {
    for (std::size_t i = 0; i < hd / 2; ++i) {
      const double theta = static_cast<double>(position) * std::pow(double{base}, -2.0 * i / hd);
      double& a = qkv[head * hd + 2 * i];
      double& b = qkv[head * hd + 2 * i + 1];
      const double ra = a * std::cos(theta) - b * std::sin(theta);
      const double rb = a * std::sin(theta) + b * std::cos(theta);
      a = ra;
      b = rb;
    }
  }
  std::vector<double> attn(s.hidden, 0.0);
  for (std::size_t head = 0; head < s.n_heads; ++head) {
    const std::size_t offset = (head / group) * hd * ctx;
    std::vector<double> q(qkv.begin() + head * hd, qkv.begin() + (head + 1) * hd);
    std::vector<double> scores = matvec(w.k_cache.subspan(offset, ctx * hd), ctx, hd, q);
    double max = scores[0], sum = 0;
    for (double v : scores) max = std::max(max, v);
    for (double& v : scores) sum += (v = std::exp(v - max));
    for (double& v : scores) v /= sum;
    const std::vector<double> out = matvec(w.v_cache.subspan(offset, hd * ctx), hd, ctx, scores);
    std::copy(out.begin(), out.end(), attn.begin() + head * hd);
  }
  std::vector<double> h = matvec(w.wo, s.hidden, s.hidden, attn);
  for (std::size_t i = 0; i < s.hidden; ++i) h[i] += input[i];
  const std::vector<double> hn = rms_norm(h, w.ffn_norm);
  const std::vector<double> gate = matvec(w.w_gate, s.ffn, s.hidden, hn);
  const std::vector<double> up = matvec(w.w_up, s.ffn, s.hidden, hn);
  std::vector<double> act(s.ffn);
  for (std::size_t i = 0; i < s.ffn; ++i) act[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
  std::vector<double> out = matvec(w.w_down, s.hidden, s.ffn, act);
  for (std::size_t i = 0; i < s.hidden; ++i) out[i] += h[i];
  return out;
}

class DecoderLayerTest : public ::testing::TestWithParam<Backend> {};

TEST_P(DecoderLayerTest, MatchesThePlainDoublePrecisionLayer) {
  if (!is_supported(GetParam())) GTEST_SKIP() << "CPU lacks " << name(GetParam());
  const SyntheticWeights weights(kSmall, 7);
  DecoderOptions options;
  options.backend = GetParam();
  DecoderLayer layer(kSmall, weights.view(), options);
  EXPECT_EQ(layer.brick_count(), 11 + 3 * kSmall.n_heads);
  const std::vector<float> x = test::normal(kSmall.hidden, 3);
  for (std::size_t position : {0u, 5u, 300u}) {
    const auto report = layer.step(x, position);
    ASSERT_TRUE(report.has_value()) << message(report.error());
    EXPECT_EQ(report->members.size(), layer.brick_count());
    const auto expected =
        reference_layer(kSmall, weights.view(), x, position, options.rms_eps, options.rope_base);
    for (std::size_t i = 0; i < kSmall.hidden; ++i) {
      ASSERT_NEAR(layer.output()[i], expected[i], 1e-4 * (1.0 + std::fabs(expected[i])))
          << "element " << i << " at position " << position;
    }
  }
}

TEST_P(DecoderLayerTest, EveryBrickVerifiesAgainstScalar) {
  if (!is_supported(GetParam())) GTEST_SKIP() << "CPU lacks " << name(GetParam());
  const SyntheticWeights weights(kSmall, 11);
  DecoderOptions options;
  options.backend = GetParam();
  DecoderLayer layer(kSmall, weights.view(), options);
  ASSERT_TRUE(layer.step(test::normal(kSmall.hidden, 5), 9).has_value());
  const auto reports = layer.verify();
  ASSERT_EQ(reports.size(), layer.brick_count());
  for (const auto& report : reports) {
    ASSERT_EQ(report.assertions.size(), 2u);
    EXPECT_TRUE(report.passed()) << report.brick << ": " << report.assertions[0].summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DecoderLayerTest,
                         ::testing::Values(Backend::Scalar, Backend::Avx2, Backend::Avx512),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(DecoderLayer, BadShapesAndWeightsAreInvalidArguments) {
  EXPECT_THROW((DecoderShape{64, 5, 1, 96, 24}.validate()), InvalidArgument);
  EXPECT_THROW((DecoderShape{64, 4, 3, 96, 24}.validate()), InvalidArgument);
  EXPECT_THROW((DecoderShape{64, 4, 2, 96, 0}.validate()), InvalidArgument);
  const SyntheticWeights weights(kSmall, 1);
  DecoderWeights truncated = weights.view();
  truncated.wo = truncated.wo.first(10);
  try {
    DecoderLayer layer(kSmall, truncated, {});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'wo'"), std::string::npos);
  }
  DecoderLayer layer(kSmall, weights.view(), {});
  EXPECT_THROW((void)layer.step(std::vector<float>(kSmall.hidden + 1), 0), InvalidArgument);
}

TEST(DecoderLayer, BudgetsFollowTheBandwidthBudget) {
  const SyntheticWeights weights(kSmall, 1);
  DecoderOptions options;
  options.bandwidth_budget = ByteBudget::from_gb_per_second(1.0);
  DecoderLayer layer(kSmall, weights.view(), options);
  const auto report = layer.step(test::normal(kSmall.hidden, 2), 0);
  ASSERT_TRUE(report.has_value());
  // The qkv matvec reads its weights and input and writes its output; at 1 GB/s that takes
  // bytes / 1000 µs.
  const double qkv_bytes =
      4.0 * (kSmall.qkv_rows() * kSmall.hidden + kSmall.hidden + kSmall.qkv_rows());
  EXPECT_DOUBLE_EQ(report->members[1].metrics.budget_us_per_token, qkv_bytes / 1e3);
}

}  // namespace
}  // namespace brick::model
