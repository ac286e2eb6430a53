#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/core/error.hpp"
#include "brick/trace/activation.hpp"
#include "brick/trace/attention_stats.hpp"
#include "brick/trace/logit_stats.hpp"
#include "brick/trace/quant_error.hpp"
#include "brick/trace/tensor_stats.hpp"
#include "ops/backend_test.hpp"
#include "trace/kernels/stats_kernels.hpp"

namespace brick::trace {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(TensorStats, MatchesDoublePrecisionReference) {
  std::vector<float> x;
  for (int i = 0; i < 1000; ++i) x.push_back(std::sin(0.37f * static_cast<float>(i)) * 3.0f + 0.5f);
  double sum = 0, squares = 0;
  for (const float v : x) sum += v, squares += double{v} * v;
  const double mean = sum / 1000.0;
  double m2 = 0;
  for (const float v : x) m2 += (v - mean) * (v - mean);
  const TensorStats s = compute_tensor_stats(x);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_NEAR(s.mean, mean, 1e-12);
  EXPECT_NEAR(s.std, std::sqrt(m2 / 1000.0), 1e-12);
  EXPECT_NEAR(s.l2_norm, std::sqrt(squares), 1e-9);
  EXPECT_EQ(s.min, *std::min_element(x.begin(), x.end()));
  EXPECT_EQ(s.max, *std::max_element(x.begin(), x.end()));
}

TEST(TensorStats, WelfordStaysStableFarFromZero) {
  // 1e9 + 64 i: floats near 1e9 are 64 apart, so these are exact; std of 0..n-1 times 64.
  std::vector<float> x;
  const int n = 4099;
  for (int i = 0; i < n; ++i) x.push_back(1e9f + 64.0f * static_cast<float>(i));
  const TensorStats s = compute_tensor_stats(x);
  const double expected_std = 64.0 * std::sqrt((double{n} * n - 1.0) / 12.0);
  EXPECT_NEAR(s.mean, 1e9 + 64.0 * (n - 1) / 2.0, 1e-3);
  EXPECT_NEAR(s.std, expected_std, expected_std * 1e-9);
}

TEST(TensorStats, NonFiniteValuesAreCountedAndExcluded) {
  const std::vector<float> x = {1.0f, kNan, 3.0f, kInf, -kInf, kNan};
  const TensorStats s = compute_tensor_stats(x);
  EXPECT_EQ(s.count, 2u);
  EXPECT_EQ(s.nan_count, 2u);
  EXPECT_EQ(s.inf_count, 2u);
  EXPECT_DOUBLE_EQ(s.mean, 2.0);
  EXPECT_DOUBLE_EQ(s.std, 1.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 3.0);
  EXPECT_DOUBLE_EQ(s.l2_norm, std::sqrt(10.0));
}

TEST(TensorStats, NanOnlyAndEmptyAreAllZero) {
  const std::vector<float> nans(37, kNan);
  const TensorStats s = compute_tensor_stats(nans);
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.nan_count, 37u);
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.max, 0.0);
  EXPECT_EQ(s.std, 0.0);
  EXPECT_EQ(compute_tensor_stats({}), TensorStats{});
}

TEST(TensorStats, HistogramBinsEdgesAndOutliers) {
  const std::vector<float> x = {-2.0f, -1.0f, -0.5f, 0.0f, 0.25f, 0.999f, 1.0f, 5.0f, kNan};
  const HistogramSpec spec{4, -1.0, 1.0};
  const TensorStats s = compute_tensor_stats(x, spec);
  EXPECT_EQ(s.histogram.below, 1u);
  EXPECT_EQ(s.histogram.above, 2u);
  EXPECT_EQ(s.histogram.counts[0], 1u);  // -1
  EXPECT_EQ(s.histogram.counts[1], 1u);  // -0.5
  EXPECT_EQ(s.histogram.counts[2], 2u);  // 0, 0.25
  EXPECT_EQ(s.histogram.counts[3], 1u);  // 0.999
  EXPECT_THROW((HistogramSpec{4, 1.0, 1.0}.validate()), InvalidArgument);
  EXPECT_THROW((HistogramSpec{kMaxHistogramBins + 1, 0.0, 1.0}.validate()), InvalidArgument);
}

// The SIMD kernels against the scalar one, on every tail length around the vector widths and the
// 256-value block, with NaN and Inf among the values.
using TensorStatsBackend = ops::test::BackendTest;

TEST_P(TensorStatsBackend, AgreesWithTheScalarKernel) {
  for (const std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 31, 255, 256, 257, 511, 1000, 4097}) {
    for (const bool sprinkled : {false, true}) {
      std::vector<float> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 3.0f + 1e3f;
      if (sprinkled) {
        for (std::size_t i = 0; i < n; i += 13) x[i] = i % 2 ? kNan : (i % 3 ? kInf : -kInf);
      }
      SCOPED_TRACE(::testing::Message() << n << " values" << (sprinkled ? " with NaN and Inf" : ""));
      const HistogramSpec histogram{8, 990.0, 1010.0};
      const TensorStats want = compute_tensor_stats(x, histogram, Backend::Scalar);
      const TensorStats got = compute_tensor_stats(x, histogram, GetParam());
      EXPECT_EQ(got.count, want.count);
      EXPECT_EQ(got.nan_count, want.nan_count);
      EXPECT_EQ(got.inf_count, want.inf_count);
      EXPECT_EQ(got.min, want.min);
      EXPECT_EQ(got.max, want.max);
      EXPECT_EQ(got.histogram, want.histogram);
      EXPECT_NEAR(got.mean, want.mean, 1e-12 * std::abs(want.mean));
      EXPECT_NEAR(got.std, want.std, 1e-9 * want.std + 1e-12);
      EXPECT_NEAR(got.l2_norm, want.l2_norm, 1e-12 * want.l2_norm);
    }
  }
}

TEST_P(TensorStatsBackend, ResidualSumsAgreeWithTheScalarKernel) {
  using kernels::ResidualKernel;
  const ResidualKernel kernel = GetParam() == Backend::Avx2 ? kernels::residual_sums_avx2 : kernels::residual_sums_avx512;
  for (const std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 1000, 4097}) {
    std::vector<float> x(n), r(n);
    for (std::size_t i = 0; i < n; ++i) {
      r[i] = std::cos(0.11f * static_cast<float>(i));
      x[i] = r[i] + 0.25f * std::sin(0.37f * static_cast<float>(i));
    }
    const kernels::ResidualSums want = kernels::residual_sums_scalar(x.data(), r.data(), n);
    const kernels::ResidualSums got = kernel(x.data(), r.data(), n);
    EXPECT_NEAR(got.residual, want.residual, 1e-12 * want.residual) << n;
    EXPECT_NEAR(got.delta, want.delta, 1e-12 * want.delta) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Simd, TensorStatsBackend, ::testing::ValuesIn(ops::test::kSimdBackends),
                         ops::test::backend_param_name);

TEST(AttentionStats, TopKTailEntropyOnCraftedWeights) {
  const std::vector<float> w = {0.1f, 0.4f, 0.2f, 0.3f};
  AttentionOptions options;
  options.top_k = 2;
  const AttentionStats s = compute_attention_stats(w, options);
  ASSERT_EQ(s.top_count, 2u);
  EXPECT_EQ(s.top[0].position, 1u);
  EXPECT_EQ(s.top[1].position, 3u);
  EXPECT_NEAR(s.tail_mass, 0.3, 1e-6);
  double entropy = 0;
  for (const float v : w) entropy -= double{v} * std::log(double{v});
  EXPECT_NEAR(s.entropy, entropy, 1e-12);
  EXPECT_FALSE(s.sink);
  EXPECT_FALSE(s.recency);
}

TEST(AttentionStats, MinWeightIsApplied) {
  const std::vector<float> w = {0.6f, 0.3f, 0.05f, 0.05f};
  AttentionOptions options;
  options.min_weight = 0.1;
  const AttentionStats s = compute_attention_stats(w, options);
  EXPECT_EQ(s.top_count, 2u);
  EXPECT_NEAR(s.tail_mass, 0.1, 1e-6);
}

TEST(AttentionStats, Detectors) {
  std::vector<float> sink(64, 0.3f / 63.0f);
  sink[0] = 0.7f;
  EXPECT_TRUE(compute_attention_stats(sink, {}).sink);
  const std::vector<float> uniform(128, 1.0f / 128.0f);
  const AttentionStats u = compute_attention_stats(uniform, {});
  EXPECT_TRUE(u.uniform);
  EXPECT_NEAR(u.entropy, std::log(128.0), 1e-6);
  EXPECT_FALSE(u.sink);
  std::vector<float> recent(100, 0.0f);
  for (int i = 96; i < 100; ++i) recent[static_cast<std::size_t>(i)] = 0.25f;
  const AttentionStats r = compute_attention_stats(recent, {});
  EXPECT_TRUE(r.recency);
  EXPECT_FALSE(r.uniform);
  // Ties keep the lower position first.
  EXPECT_EQ(r.top[0].position, 96u);
  EXPECT_THROW(compute_attention_stats({}, {}), InvalidArgument);
  const std::vector<float> bad = {kNan, -1.0f, 1.0f};
  EXPECT_EQ(compute_attention_stats(bad, {}).invalid, 2u);
}

TEST(LogitStats, SoftmaxTopKRankAndEntropy) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, -kInf};
  const std::vector<std::int32_t> tracked = {0, 4};
  const LogitStats s = compute_logit_stats(logits, 2, 3, tracked);
  double z = 0;
  for (const float l : {1.0f, 3.0f, 2.0f, 3.0f}) z += std::exp(double{l} - 3.0);
  ASSERT_EQ(s.top_count, 3u);
  EXPECT_EQ(s.top[0].token, 1);  // tie with 3: lower id first
  EXPECT_EQ(s.top[1].token, 3);
  EXPECT_EQ(s.top[2].token, 2);
  EXPECT_NEAR(s.top[0].probability, 1.0 / z, 1e-15);
  EXPECT_EQ(s.chosen.rank, 3u);
  EXPECT_NEAR(s.chosen.probability, std::exp(-1.0) / z, 1e-15);
  double entropy = 0;
  for (const float l : {1.0f, 3.0f, 2.0f, 3.0f}) {
    const double p = std::exp(double{l} - 3.0) / z;
    entropy -= p * std::log(p);
  }
  EXPECT_NEAR(s.entropy, entropy, 1e-12);
  ASSERT_EQ(s.tracked_count, 2u);
  EXPECT_EQ(s.tracked[0].rank, 4u);
  EXPECT_EQ(s.tracked[1].rank, 5u);
  EXPECT_EQ(s.tracked[1].probability, 0.0);
  EXPECT_THROW(compute_logit_stats(logits, 5, 3), InvalidArgument);
  EXPECT_THROW(compute_logit_stats({}, 0, 3), InvalidArgument);
  EXPECT_THROW(compute_logit_stats(logits, 0, 0), InvalidArgument);
}

TEST(LogitStats, SoftmaxIsStableForHugeLogits) {
  const std::vector<float> logits = {1e30f, 1e30f};
  const LogitStats s = compute_logit_stats(logits, 0, 2);
  EXPECT_DOUBLE_EQ(s.top[0].probability, 0.5);
  EXPECT_NEAR(s.entropy, std::log(2.0), 1e-15);
}

TEST(LogitStats, DecisiveLayerIsTheLargestRankImprovement) {
  const std::vector<std::uint32_t> ranks = {900, 800, 20, 3, 1};
  EXPECT_EQ(decisive_layer(ranks, 1000), 2u);
  const std::vector<std::uint32_t> flat = {1000, 1000};
  EXPECT_FALSE(decisive_layer(flat, 1000));
  EXPECT_FALSE(decisive_layer({}, 1000));
  const std::vector<float> logits = {0.0f, kNan, 2.0f};
  EXPECT_EQ(rank_of(logits, 1), 3u);
  EXPECT_EQ(rank_of(logits, 2), 1u);
}

TEST(QuantError, KnownSignals) {
  std::vector<float> ref(1000), q(1000);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ref[i] = std::sin(0.1f * static_cast<float>(i));
    q[i] = ref[i] + ((i % 2 == 0) ? 0.01f : -0.01f);
  }
  double signal = 0, noise = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    signal += double{ref[i]} * ref[i];
    noise += (double{q[i]} - ref[i]) * (double{q[i]} - ref[i]);
  }
  const QuantError e = compute_quant_error(q, ref);
  EXPECT_NEAR(e.snr_db, 10.0 * std::log10(signal / noise), 1e-9);
  EXPECT_NEAR(e.mse, noise / 1000.0, 1e-12);
  EXPECT_NEAR(e.max_abs_error, 0.01, 1e-6);
  EXPECT_GT(e.cosine, 0.999);
  EXPECT_EQ(e.quant_class, QuantClass::Ok);
  const QuantError same = compute_quant_error(ref, ref);
  EXPECT_EQ(same.snr_db, kMaxSnrDb);
  EXPECT_DOUBLE_EQ(same.cosine, 1.0);
  std::vector<float> flipped(ref);
  for (float& v : flipped) v = -v;
  EXPECT_EQ(compute_quant_error(flipped, ref).quant_class, QuantClass::Critical);
  EXPECT_EQ(classify_cosine(0.993), QuantClass::Warning);
  EXPECT_EQ(classify_cosine(0.995), QuantClass::Ok);
  EXPECT_EQ(classify_cosine(0.9899), QuantClass::Critical);
  q[3] = kNan;
  EXPECT_EQ(compute_quant_error(q, ref).quant_class, QuantClass::Critical);
  EXPECT_THROW(compute_quant_error(std::span(q).first(10), ref), InvalidArgument);
  EXPECT_THROW(compute_quant_error({}, {}), InvalidArgument);
}

TEST(Anomaly, DetectorsInOrder) {
  const AnomalyThresholds t;
  TensorStats s;
  s.count = 10;
  s.std = 1.0;
  s.max = 3.0;
  EXPECT_FALSE(detect_anomaly(s, 0.5, t));
  EXPECT_EQ(detect_anomaly(s, 0.995, t)->first, AnomalyKind::ResidualDominance);
  s.std = 1e-7;
  EXPECT_EQ(detect_anomaly(s, std::nullopt, t)->first, AnomalyKind::Vanishing);
  s.max = 2e6;
  EXPECT_EQ(detect_anomaly(s, std::nullopt, t)->first, AnomalyKind::Explosion);
  s.nan_count = 1;
  EXPECT_EQ(detect_anomaly(s, std::nullopt, t)->first, AnomalyKind::NonFinite);
}

}  // namespace
}  // namespace brick::trace
