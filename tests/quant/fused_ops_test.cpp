// FusedQKVOp and FusedGateUpOp: identical to the separate mat-vecs they replace, within tolerance of
// ggml doing those mat-vecs, live Equivalence assertions when wrapped in a ComputeBrick, and bad
// shapes rejected.
#include "brick/quant/fused_ops.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "brick/core/compute_brick.hpp"
#include "brick/core/error.hpp"
#include "quant/row_walk.hpp"
#include "quant/weight_matrices.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

constexpr std::size_t kHidden = 4096;
constexpr std::size_t kHeads = 32;
constexpr std::size_t kKvHeads = 8;
constexpr std::size_t kHeadDim = 128;
constexpr std::size_t kFfn = 14336;

using detail::RowWalk;
using test::OwnedMatrix;
using test::weight_matrix;
using Weights = OwnedMatrix;

std::vector<float> separate_matvec(const Weights& w, std::span<const float> x, ThreadPool& pool) {
  std::vector<float> y(w.rows);
  matvec(w.view(), x, std::span(y), pool);
  return y;
}

std::vector<float> ggml_matvec(const test::GgmlOracle& oracle, const Weights& w, std::span<const float> x) {
  test::GgmlMatVec ggml(oracle, w.ggml_type(), w.rows, w.cols);
  std::memcpy(ggml.weights().data(), w.bytes.data(), w.bytes.size());
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

// The weight types of one QKV projection: llama.cpp's Q4_K_M and Q5_K_M keep V in Q6_K (in some
// layers), the other files use one type, and a mixture of all kinds.
struct QkvTypes {
  TensorType q, k, v;
};
const std::vector<QkvTypes>& qkv_mixes() {
  static const std::vector<QkvTypes> mixes = {
      {TensorType::Q5_K, TensorType::Q5_K, TensorType::Q6_K}, {TensorType::Q4_K, TensorType::Q4_K, TensorType::Q6_K},
      {TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0}, {TensorType::F16, TensorType::F16, TensorType::F16},
      {TensorType::BF16, TensorType::BF16, TensorType::BF16}, {TensorType::F32, TensorType::F32, TensorType::F32},
      {TensorType::Q4_K, TensorType::Q8_0, TensorType::F16}};
  return mixes;
}

std::string mix_name(const QkvTypes& t) { return fmt::format("{}/{}/{}", name(t.q), name(t.k), name(t.v)); }

struct Qkv {
  Weights q, k, v;
  explicit Qkv(const QkvTypes& t)
      : q(weight_matrix(t.q, kHeads * kHeadDim, kHidden, 1)),
        k(weight_matrix(t.k, kKvHeads * kHeadDim, kHidden, 2)),
        v(weight_matrix(t.v, kKvHeads * kHeadDim, kHidden, 3)) {}
};

TEST(FusedQKVOp, EqualsTheThreeSeparateMatvecsAndGgmlForEveryMixOfTypes) {
  ThreadPool pool(2);
  const test::GgmlOracle& oracle = test::GgmlOracle::load();
  const std::vector<float> x = test::normal(kHidden, 11);
  for (const QkvTypes& types : qkv_mixes()) {
    const Qkv w(types);
    const FusedQKVOp op(w.q.view(), w.k.view(), w.v.view(), kHeads, kKvHeads, kHeadDim, pool);
    const FusedQKVOp::Input input{x};
    ASSERT_EQ(op.output_size(input), 4096u + 2 * 1024u);
    std::vector<float> out(op.output_size(input));
    op.run(input, out, Backend::Auto);

    std::vector<float> separate;
    std::vector<float> ggml;
    for (const Weights* m : {&w.q, &w.k, &w.v}) {
      const std::vector<float> y = separate_matvec(*m, x, pool);
      separate.insert(separate.end(), y.begin(), y.end());
      const std::vector<float> g = ggml_matvec(oracle, *m, x);
      ggml.insert(ggml.end(), g.begin(), g.end());
    }
    EXPECT_EQ(out, separate) << mix_name(types);
    EXPECT_LT(worst_relative(out, ggml), 1e-5) << mix_name(types);
  }
}

TEST(FusedGateUpOp, EqualsSiluOfGateTimesUpAndGgml) {
  const Weights gate = weight_matrix(TensorType::Q5_K, kFfn, kHidden, 4);
  const Weights up = weight_matrix(TensorType::Q6_K, kFfn, kHidden, 5);
  ThreadPool pool(2);
  const FusedGateUpOp op(gate.view(), up.view(), pool);
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

TEST(FusedGateUpOp, GateAndUpOfEveryTypeGiveTheSeparateMatvecsBitsAtEveryThreadCountInBothWalks) {
  // In the four-runs walk gate and up of one type run four rows in lockstep (rows i and i + half of
  // each thread's range), odd row counts leaving a last row on its own, and gate and up of two types
  // go row by row; in the other, tiles of 1024 gate rows then up rows (1025 rows: two tiles).
  std::vector<std::pair<TensorType, TensorType>> pairs;
  for (const TensorType type : test::computable_types()) pairs.emplace_back(type, type);
  pairs.emplace_back(TensorType::Q4_K, TensorType::Q6_K);
  pairs.emplace_back(TensorType::Q8_0, TensorType::BF16);
  for (const auto& [gate_type, up_type] : pairs) {
    for (const std::size_t rows : {std::size_t{37}, std::size_t{1025}}) {
      const Weights gate = weight_matrix(gate_type, rows, kHidden, 6);
      const Weights up = weight_matrix(up_type, rows, kHidden, 7);
      const std::vector<float> x = test::normal(kHidden, 13);
      for (const std::size_t threads : {1u, 2u, 3u}) {
        ThreadPool pool(threads);
        const FusedGateUpOp op(gate.view(), up.view(), pool);
        const std::vector<float> g = separate_matvec(gate, x, pool);
        const std::vector<float> u = separate_matvec(up, x, pool);
        std::vector<float> expected(rows);
        for (std::size_t i = 0; i < rows; ++i) expected[i] = silu(g[i]) * u[i];
        for (const RowWalk walk : {RowWalk::FourRuns, RowWalk::OneAfterAnother}) {
          const quant::detail::RowWalkPin pin(walk);
          std::vector<float> out(rows);
          op.run(FusedGateUpOp::Input{x}, out, Backend::Auto);
          EXPECT_EQ(out, expected) << name(gate_type) << "/" << name(up_type) << " rows=" << rows
                                   << " threads=" << threads << " walk " << static_cast<int>(walk);
        }
      }
    }
  }
}

// A batch runs as one GEMM pass; each token's outputs must be the bits of the same op run on that
// token alone, for every backend the CPU has, several thread counts and token counts around the
// GEMM's tile of eight tokens.
std::vector<Backend> runnable_backends() {
  std::vector<Backend> backends;
  for (const Backend b : {Backend::Scalar, Backend::Avx2, Backend::Avx512}) {
    if (is_supported(b)) backends.push_back(b);
  }
  return backends;
}

template <class Op>
void expect_batch_equals_tokens(const Op& op, std::size_t hidden, std::size_t width, const std::string& what) {
  for (const std::size_t tokens : {2u, 9u}) {
    const std::vector<float> x = test::normal(tokens * hidden, 40 + tokens);
    for (const Backend backend : runnable_backends()) {
      std::vector<float> batch(tokens * width);
      op.run(typename Op::Input{x, tokens}, batch, backend);
      for (std::size_t t = 0; t < tokens; ++t) {
        std::vector<float> one(width);
        op.run(typename Op::Input{std::span(x).subspan(t * hidden, hidden), 1}, one, backend);
        ASSERT_TRUE(std::equal(one.begin(), one.end(), batch.begin() + static_cast<std::ptrdiff_t>(t * width)))
            << what << " " << name(backend) << " tokens " << tokens << " token " << t;
      }
    }
  }
}

TEST(FusedQKVOp, ABatchGivesEachTokenTheBitsOfAOneTokenCall) {
  for (const QkvTypes& types : qkv_mixes()) {
    const Qkv w(types);
    for (const std::size_t threads : {3u}) {
      ThreadPool pool(threads);
      const FusedQKVOp op(w.q.view(), w.k.view(), w.v.view(), kHeads, kKvHeads, kHeadDim, pool);
      expect_batch_equals_tokens(op, kHidden, op.q_size() + 2 * op.kv_size(),
                                 fmt::format("{} threads {}", mix_name(types), threads));
    }
  }
}

TEST(FusedGateUpOp, ABatchGivesEachTokenTheBitsOfAOneTokenCall) {
  std::vector<std::pair<TensorType, TensorType>> pairs;
  for (const TensorType type : test::computable_types()) pairs.emplace_back(type, type);
  pairs.emplace_back(TensorType::Q4_K, TensorType::Q6_K);
  for (const auto& [gate_type, up_type] : pairs) {
    const Weights gate = weight_matrix(gate_type, 301, kHidden, 6);
    const Weights up = weight_matrix(up_type, 301, kHidden, 7);
    for (const std::size_t threads : {1u, 3u}) {
      ThreadPool pool(threads);
      const FusedGateUpOp op(gate.view(), up.view(), pool);
      expect_batch_equals_tokens(op, kHidden, 301, fmt::format("{}/{} threads {}", name(gate_type), name(up_type), threads));
    }
  }
}

TEST(ProjectionOp, ABatchGivesEachTokenTheBitsOfAOneTokenCall) {
  for (const TensorType type : test::computable_types()) {
    const Weights w = weight_matrix(type, 517, 1024, 8);
    ThreadPool pool(2);
    const ProjectionOp op(BrickId::OutputProjection, "wo", w.view(), pool);
    expect_batch_equals_tokens(op, 1024, 517, std::string(name(type)));
  }
}

TEST(FusedOps, ComputeBrickEquivalenceAgainstScalarIsCheckedAndPasses) {
  const Qkv w({TensorType::Q4_K, TensorType::Q8_0, TensorType::F16});
  const Weights gate = weight_matrix(TensorType::Q6_K, 2048, kHidden, 6);
  const Weights up = weight_matrix(TensorType::BF16, 2048, kHidden, 7);
  ThreadPool pool(2);
  const std::vector<float> x = test::normal(kHidden, 13);
  const Equivalence vs_scalar{Backend::Scalar, 1e-4, 1e-5};
  const BrickPolicy check_all{CheckPolicy::All, OnFailure::Error, false};

  ComputeBrick qkv(FusedQKVOp(w.q.view(), w.k.view(), w.v.view(), kHeads, kKvHeads, kHeadDim, pool),
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

  ComputeBrick gate_up(FusedGateUpOp(gate.view(), up.view(), pool), {vs_scalar}, Backend::Auto, {}, check_all);
  EXPECT_EQ(gate_up.id(), BrickId::GateUpProjection);
  const VerifyReport verified = gate_up.verify({x});
  ASSERT_EQ(verified.assertions.size(), 1u);
  EXPECT_TRUE(verified.passed()) << verified.assertions[0].summary();
}

TEST(FusedOps, CostCountsEveryWeightByteAndTwoFlopsPerWeight) {
  const Weights q = weight_matrix(TensorType::Q5_K, kHeads * kHeadDim, kHidden, 1, false);
  const Weights k = weight_matrix(TensorType::Q5_K, kKvHeads * kHeadDim, kHidden, 2, false);
  const Weights v = weight_matrix(TensorType::Q6_K, kKvHeads * kHeadDim, kHidden, 3);
  const struct {
    const Weights& q;
    const Weights& k;
    const Weights& v;
  } w{q, k, v};
  ThreadPool pool(1);
  const FusedQKVOp qkv(w.q.view(), w.k.view(), w.v.view(), kHeads, kKvHeads, kHeadDim, pool);
  const std::vector<float> x(kHidden);
  const OpCost cost = qkv.cost({x});
  const double weight_bytes = static_cast<double>(w.q.bytes.size() + w.k.bytes.size() + w.v.bytes.size());
  EXPECT_EQ(cost.tokens, 1u);
  EXPECT_DOUBLE_EQ(cost.bytes, weight_bytes + 4.0 * kHidden + 4.0 * 6144);
  EXPECT_GE(cost.flops, 2.0 * 6144 * kHidden);
  EXPECT_LT(cost.flops, 2.0 * 6144 * kHidden * 1.01);

  const Weights gate = weight_matrix(TensorType::Q6_K, 512, 1024, 8);
  const Weights up = weight_matrix(TensorType::Q6_K, 512, 1024, 9);
  const FusedGateUpOp gate_up(gate.view(), up.view(), pool);
  const std::vector<float> x1k(1024);
  const OpCost gu = gate_up.cost({x1k});
  EXPECT_DOUBLE_EQ(gu.bytes, 2.0 * 512 * 4 * sizeof(BlockQ6K) + 4.0 * 1024 + 4.0 * 512);
  EXPECT_GE(gu.flops, 4.0 * 512 * 1024);
}

TEST(FusedOps, RejectBadShapesAndSizes) {
  ThreadPool pool(1);
  const Weights q = weight_matrix(TensorType::Q5_K, 512, 256, 1);
  const Weights kv = weight_matrix(TensorType::Q6_K, 128, 256, 2);
  const Weights kv_wide = weight_matrix(TensorType::Q6_K, 128, 512, 3);
  EXPECT_NO_THROW(FusedQKVOp(q.view(), kv.view(), kv.view(), 8, 2, 64, pool));
  EXPECT_THROW(FusedQKVOp(q.view(), kv.view(), kv.view(), 8, 3, 64, pool), InvalidArgument);  // 3 !| 8
  EXPECT_THROW(FusedQKVOp(q.view(), kv.view(), kv.view(), 4, 2, 128, pool), InvalidArgument);  // K rows
  EXPECT_THROW(FusedQKVOp(q.view(), kv_wide.view(), kv.view(), 8, 2, 64, pool), InvalidArgument);
  EXPECT_THROW(FusedQKVOp(q.view(), kv.view(), kv.view(), 8, 0, 64, pool), InvalidArgument);
  const FusedQKVOp qkv(q.view(), kv.view(), kv.view(), 8, 2, 64, pool);
  std::vector<float> x(256);
  std::vector<float> out(768);
  EXPECT_NO_THROW(qkv.run({x}, out, Backend::Scalar));
  EXPECT_THROW(qkv.run({std::span(x).first(255)}, out, Backend::Scalar), InvalidArgument);
  EXPECT_THROW(qkv.run({x}, std::span(out).first(767), Backend::Scalar), InvalidArgument);

  // A type Brick does not compute with, wherever it is.
  const std::vector<std::byte> q4_0(*row_bytes(TensorType::Q4_0, 256) * 128);
  const WeightMatrix q4_0_kv(TensorType::Q4_0, q4_0, 128, 256);
  EXPECT_THROW(FusedQKVOp(q.view(), kv.view(), q4_0_kv, 8, 2, 64, pool), InvalidArgument);
  EXPECT_THROW(FusedGateUpOp(q4_0_kv, kv.view(), pool), InvalidArgument);

  EXPECT_THROW(FusedGateUpOp(q.view(), kv.view(), pool), InvalidArgument);
  const Weights f16_kv = weight_matrix(TensorType::F16, 128, 256, 4);
  EXPECT_NO_THROW(FusedGateUpOp(f16_kv.view(), kv.view(), pool));  // mixed types, same shape
  EXPECT_THROW(FusedGateUpOp(f16_kv.view(), kv_wide.view(), pool), InvalidArgument);
  const FusedGateUpOp gate_up(kv.view(), kv.view(), pool);
  std::vector<float> out128(128);
  EXPECT_NO_THROW(gate_up.run({x}, out128, Backend::Auto));
  EXPECT_THROW(gate_up.run({std::span(x).first(128)}, out128, Backend::Auto), InvalidArgument);
}

}  // namespace
}  // namespace brick::quant
