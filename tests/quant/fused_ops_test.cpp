// FusedQKVOp and FusedGateUpOp: identical to the separate mat-vecs they replace, within tolerance of
// ggml doing those mat-vecs, live Equivalence assertions when wrapped in a ComputeBrick, and bad
// shapes rejected.
#include "brick/quant/fused_ops.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "brick/core/compute_brick.hpp"
#include "brick/core/error.hpp"
#include "quant/kquant_blocks.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

constexpr std::size_t kHidden = 4096;
constexpr std::size_t kHeads = 32;
constexpr std::size_t kKvHeads = 8;
constexpr std::size_t kHeadDim = 128;
constexpr std::size_t kFfn = 14336;

// Owns the blocks of one matrix and views them as a WeightMatrix.
struct Weights {
  std::vector<BlockQ5K> q5k;
  std::vector<BlockQ6K> q6k;
  std::size_t rows = 0;
  std::size_t cols = 0;

  // Random bytes: every block pattern, but outputs with heavy cancellation.
  static Weights random(bool six_bit, std::size_t rows, std::size_t cols, std::uint64_t seed) {
    Weights w;
    w.rows = rows;
    w.cols = cols;
    if (six_bit) {
      w.q6k = test::random_q6k(rows * cols / kBlockSize, seed);
    } else {
      w.q5k = test::random_q5k(rows * cols / kBlockSize, seed);
    }
    return w;
  }
  static Weights quantized(bool six_bit, std::size_t rows, std::size_t cols, std::uint64_t seed) {
    Weights w;
    w.rows = rows;
    w.cols = cols;
    if (six_bit) {
      w.q6k = test::realistic_blocks<BlockQ6K>(rows * cols / kBlockSize, seed);
    } else {
      w.q5k = test::realistic_blocks<BlockQ5K>(rows * cols / kBlockSize, seed);
    }
    return w;
  }
  WeightMatrix matrix() const {
    if (!q6k.empty()) return Q6KMatrix{q6k, rows, cols};
    return Q5KMatrix{q5k, rows, cols};
  }
  std::span<const std::byte> bytes() const {
    return q6k.empty() ? std::as_bytes(std::span(q5k)) : std::as_bytes(std::span(q6k));
  }
  test::GgmlType ggml_type() const { return q6k.empty() ? test::GgmlType::Q5_K : test::GgmlType::Q6_K; }
};

std::vector<float> separate_matvec(const Weights& w, std::span<const float> x, ThreadPool& pool) {
  std::vector<float> y(w.rows);
  matvec(w.matrix(), x, std::span(y), pool);
  return y;
}

std::vector<float> ggml_matvec(const test::GgmlOracle& oracle, const Weights& w, std::span<const float> x) {
  test::GgmlMatVec ggml(oracle, w.ggml_type(), w.rows, w.cols);
  std::memcpy(ggml.weights().data(), w.bytes().data(), w.bytes().size());
  std::copy(x.begin(), x.end(), ggml.input().begin());
  ggml.compute(2);
  return {ggml.output().begin(), ggml.output().end()};
}

float silu(float v) { return v / (1.0f + std::exp(-v)); }

// Largest |a - b| relative to max(1, |b|) over the two vectors.
double worst_relative(std::span<const float> a, std::span<const float> b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::abs(static_cast<double>(b[i]))));
  }
  return worst;
}

// Q5_K_M-style mixture: Q and K in Q5_K, V in Q6_K.
struct Qkv {
  Weights q = Weights::quantized(false, kHeads * kHeadDim, kHidden, 1);
  Weights k = Weights::quantized(false, kKvHeads * kHeadDim, kHidden, 2);
  Weights v = Weights::quantized(true, kKvHeads * kHeadDim, kHidden, 3);
};

TEST(FusedQKVOp, EqualsTheThreeSeparateMatvecsAndGgml) {
  const Qkv w;
  ThreadPool pool(2);
  const FusedQKVOp op(w.q.matrix(), w.k.matrix(), w.v.matrix(), kHeads, kKvHeads, kHeadDim, pool);
  const std::vector<float> x = test::normal(kHidden, 11);
  const FusedQKVOp::Input input{x};
  ASSERT_EQ(op.output_size(input), 4096u + 2 * 1024u);
  std::vector<float> out(op.output_size(input));
  op.run(input, out, Backend::Auto);

  std::vector<float> separate;
  for (const Weights* m : {&w.q, &w.k, &w.v}) {
    const std::vector<float> y = separate_matvec(*m, x, pool);
    separate.insert(separate.end(), y.begin(), y.end());
  }
  EXPECT_EQ(out, separate);

  const test::GgmlOracle& oracle = test::GgmlOracle::load();
  std::vector<float> ggml;
  for (const Weights* m : {&w.q, &w.k, &w.v}) {
    const std::vector<float> y = ggml_matvec(oracle, *m, x);
    ggml.insert(ggml.end(), y.begin(), y.end());
  }
  EXPECT_LT(worst_relative(out, ggml), 1e-5);
}

TEST(FusedGateUpOp, EqualsSiluOfGateTimesUpAndGgml) {
  const Weights gate = Weights::quantized(false, kFfn, kHidden, 4);
  const Weights up = Weights::quantized(true, kFfn, kHidden, 5);
  ThreadPool pool(2);
  const FusedGateUpOp op(gate.matrix(), up.matrix(), pool);
  const std::vector<float> x = test::normal(kHidden, 12);
  const FusedGateUpOp::Input input{x};
  std::vector<float> out(op.output_size(input));
  op.run(input, out, Backend::Auto);

  const std::vector<float> g = separate_matvec(gate, x, pool);
  const std::vector<float> u = separate_matvec(up, x, pool);
  std::vector<float> expected(kFfn);
  for (std::size_t i = 0; i < kFfn; ++i) expected[i] = silu(g[i]) * u[i];
  EXPECT_EQ(out, expected);

  const test::GgmlOracle& oracle = test::GgmlOracle::load();
  const std::vector<float> gg = ggml_matvec(oracle, gate, x);
  const std::vector<float> gu = ggml_matvec(oracle, up, x);
  std::vector<float> ggml(kFfn);
  for (std::size_t i = 0; i < kFfn; ++i) ggml[i] = silu(gg[i]) * gu[i];
  EXPECT_LT(worst_relative(out, ggml), 1e-5);
}

TEST(FusedGateUpOp, SameTypeGateAndUpGiveTheSeparateMatvecsBitsAtEveryThreadCount) {
  // Gate and up of one type run four rows in lockstep (rows i and i + half of each thread's range);
  // odd row counts leave a last row on its own.
  for (const bool six_bit : {false, true}) {
    for (const std::size_t rows : {std::size_t{37}, std::size_t{1024}}) {
      const Weights gate = Weights::quantized(six_bit, rows, kHidden, 6);
      const Weights up = Weights::quantized(six_bit, rows, kHidden, 7);
      const std::vector<float> x = test::normal(kHidden, 13);
      for (const std::size_t threads : {1u, 2u, 3u}) {
        ThreadPool pool(threads);
        const FusedGateUpOp op(gate.matrix(), up.matrix(), pool);
        std::vector<float> out(rows);
        op.run(FusedGateUpOp::Input{x}, out, Backend::Auto);
        const std::vector<float> g = separate_matvec(gate, x, pool);
        const std::vector<float> u = separate_matvec(up, x, pool);
        std::vector<float> expected(rows);
        for (std::size_t i = 0; i < rows; ++i) expected[i] = silu(g[i]) * u[i];
        EXPECT_EQ(out, expected) << (six_bit ? "Q6_K" : "Q5_K") << " rows=" << rows << " threads=" << threads;
      }
    }
  }
}

TEST(FusedOps, ComputeBrickEquivalenceAgainstScalarIsCheckedAndPasses) {
  const Qkv w;
  const Weights gate = Weights::quantized(true, 2048, kHidden, 6);
  const Weights up = Weights::quantized(false, 2048, kHidden, 7);
  ThreadPool pool(2);
  const std::vector<float> x = test::normal(kHidden, 13);
  const Equivalence vs_scalar{Backend::Scalar, 1e-4, 1e-5};
  const BrickPolicy check_all{CheckPolicy::All, OnFailure::Error, false};

  ComputeBrick qkv(FusedQKVOp(w.q.matrix(), w.k.matrix(), w.v.matrix(), kHeads, kKvHeads, kHeadDim, pool),
                   {vs_scalar, Finite{}}, Backend::Auto, {}, check_all);
  EXPECT_EQ(qkv.id(), BrickId::QkvProjection);
  std::vector<float> out(6144);
  const auto report = qkv.run({x}, out);
  ASSERT_TRUE(report.has_value()) << message(report.error());
  ASSERT_EQ(report->assertions.size(), 2u);
  EXPECT_TRUE(report->assertions[0].evaluated);
  EXPECT_TRUE(report->assertions[0].passed) << report->assertions[0].summary();
  EXPECT_GT(report->metrics.gb_per_second, 0.0);
  EXPECT_TRUE(qkv.verify({x}).passed());

  ComputeBrick gate_up(FusedGateUpOp(gate.matrix(), up.matrix(), pool), {vs_scalar}, Backend::Auto, {}, check_all);
  EXPECT_EQ(gate_up.id(), BrickId::GateUpProjection);
  const VerifyReport verified = gate_up.verify({x});
  ASSERT_EQ(verified.assertions.size(), 1u);
  EXPECT_TRUE(verified.passed()) << verified.assertions[0].summary();
}

TEST(FusedOps, CostCountsEveryWeightByteAndTwoFlopsPerWeight) {
  const Weights q = Weights::random(false, kHeads * kHeadDim, kHidden, 1);
  const Weights k = Weights::random(false, kKvHeads * kHeadDim, kHidden, 2);
  const Weights v = Weights::random(true, kKvHeads * kHeadDim, kHidden, 3);
  const struct {
    const Weights& q;
    const Weights& k;
    const Weights& v;
  } w{q, k, v};
  ThreadPool pool(1);
  const FusedQKVOp qkv(w.q.matrix(), w.k.matrix(), w.v.matrix(), kHeads, kKvHeads, kHeadDim, pool);
  const std::vector<float> x(kHidden);
  const OpCost cost = qkv.cost({x});
  const double weight_bytes = static_cast<double>(w.q.bytes().size() + w.k.bytes().size() + w.v.bytes().size());
  EXPECT_EQ(cost.tokens, 1u);
  EXPECT_DOUBLE_EQ(cost.bytes, weight_bytes + 4.0 * kHidden + 4.0 * 6144);
  EXPECT_GE(cost.flops, 2.0 * 6144 * kHidden);
  EXPECT_LT(cost.flops, 2.0 * 6144 * kHidden * 1.01);

  const Weights gate = Weights::random(true, 512, 1024, 8);
  const Weights up = Weights::random(true, 512, 1024, 9);
  const FusedGateUpOp gate_up(gate.matrix(), up.matrix(), pool);
  const std::vector<float> x1k(1024);
  const OpCost gu = gate_up.cost({x1k});
  EXPECT_DOUBLE_EQ(gu.bytes, 2.0 * 512 * 4 * sizeof(BlockQ6K) + 4.0 * 1024 + 4.0 * 512);
  EXPECT_GE(gu.flops, 4.0 * 512 * 1024);
}

TEST(FusedOps, RejectBadShapesAndSizes) {
  ThreadPool pool(1);
  const Weights q = Weights::random(false, 512, 256, 1);
  const Weights kv = Weights::random(true, 128, 256, 2);
  const Weights kv_wide = Weights::random(true, 128, 512, 3);
  EXPECT_NO_THROW(FusedQKVOp(q.matrix(), kv.matrix(), kv.matrix(), 8, 2, 64, pool));
  EXPECT_THROW(FusedQKVOp(q.matrix(), kv.matrix(), kv.matrix(), 8, 3, 64, pool), InvalidArgument);  // 3 !| 8
  EXPECT_THROW(FusedQKVOp(q.matrix(), kv.matrix(), kv.matrix(), 4, 2, 128, pool), InvalidArgument);  // K rows
  EXPECT_THROW(FusedQKVOp(q.matrix(), kv_wide.matrix(), kv.matrix(), 8, 2, 64, pool), InvalidArgument);
  EXPECT_THROW(FusedQKVOp(q.matrix(), kv.matrix(), kv.matrix(), 8, 0, 64, pool), InvalidArgument);
  const FusedQKVOp qkv(q.matrix(), kv.matrix(), kv.matrix(), 8, 2, 64, pool);
  std::vector<float> x(256);
  std::vector<float> out(768);
  EXPECT_NO_THROW(qkv.run({x}, out, Backend::Scalar));
  EXPECT_THROW(qkv.run({std::span(x).first(255)}, out, Backend::Scalar), InvalidArgument);
  EXPECT_THROW(qkv.run({x}, std::span(out).first(767), Backend::Scalar), InvalidArgument);

  EXPECT_THROW(FusedGateUpOp(q.matrix(), kv.matrix(), pool), InvalidArgument);
  const FusedGateUpOp gate_up(kv.matrix(), kv.matrix(), pool);
  std::vector<float> out128(128);
  EXPECT_NO_THROW(gate_up.run({x}, out128, Backend::Auto));
  EXPECT_THROW(gate_up.run({std::span(x).first(128)}, out128, Backend::Auto), InvalidArgument);
}

}  // namespace
}  // namespace brick::quant
