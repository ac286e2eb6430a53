// matvec: every backend and pool size against the exact per-row value, bad shapes, and ggml's
// mul_mat on realistic shapes.
#include "brick/quant/matvec.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fmt/format.h>
#include <random>
#include <tuple>
#include <vector>

#include "brick/core/error.hpp"
#include "quant/kquant_blocks.hpp"
#include "support/random_data.hpp"
#include "support/ggml_oracle.hpp"

namespace brick::quant {
namespace {

constexpr double kRelativeTolerance = 1e-6;

template <class Block>
std::vector<Block> random_blocks(std::size_t count, std::uint64_t seed) {
  if constexpr (std::is_same_v<Block, BlockQ5K>) {
    return test::random_q5k(count, seed);
  } else {
    return test::random_q6k(count, seed);
  }
}

// y[r] checked against the exact value of row r . xq.
template <class Block>
void expect_rows_exact(const std::vector<Block>& blocks, std::size_t rows, std::size_t cols,
                       const std::vector<BlockQ8K>& xq, std::span<const float> y, const std::string& what) {
  const std::size_t per_row = cols / kBlockSize;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::vector<Block> row(blocks.begin() + r * per_row, blocks.begin() + (r + 1) * per_row);
    const test::ExactDot expected = test::exact_dot(row, xq);
    ASSERT_NEAR(y[r], expected.value, kRelativeTolerance * expected.magnitude) << what << " row " << r;
  }
}

template <class T>
class MatvecTest : public ::testing::Test {};
using Blocks = ::testing::Types<BlockQ5K, BlockQ6K>;
TYPED_TEST_SUITE(MatvecTest, Blocks);

TYPED_TEST(MatvecTest, EveryBackendAndPoolSizeMatchesTheExactRows) {
  for (std::size_t threads : {1u, 2u, 3u}) {
    ThreadPool pool(threads);
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 256}, {3, 768}, {37, 1024}, {130, 4096}}) {
      const auto blocks = random_blocks<TypeParam>(rows * cols / kBlockSize, rows * 31 + cols);
      const auto xq = test::random_q8k(cols / kBlockSize, cols + 5);
      const QuantMatrix<TypeParam> w{blocks, rows, cols};
      for (Backend backend : kConcreteBackends) {
        if (!is_supported(backend)) continue;
        std::vector<float> y(rows, -1.0f);
        matvec(w, std::span<const BlockQ8K>(xq), std::span(y), pool, backend);
        expect_rows_exact(blocks, rows, cols, xq, y,
                          fmt::format("{} {}x{} threads={}", name(backend), rows, cols, threads));
      }
    }
  }
}

TYPED_TEST(MatvecTest, FloatInputIsQuantizedOnceWithQuantizeQ8K) {
  ThreadPool pool(2);
  const std::size_t rows = 19;
  const std::size_t cols = 512;
  const auto blocks = random_blocks<TypeParam>(rows * cols / kBlockSize, 77);
  const QuantMatrix<TypeParam> w{blocks, rows, cols};
  for (const test::Pattern& pattern : test::adversarial_patterns(cols, 9)) {
    std::vector<BlockQ8K> xq(cols / kBlockSize);
    quantize_q8k(pattern.values, xq);
    std::vector<float> y(rows);
    matvec(w, std::span<const float>(pattern.values), std::span(y), pool);
    std::vector<float> from_q8k(rows);
    matvec(w, std::span<const BlockQ8K>(xq), std::span(from_q8k), pool);
    EXPECT_EQ(y, from_q8k) << pattern.name;
  }
}

TYPED_TEST(MatvecTest, RejectsBadShapes) {
  ThreadPool pool(1);
  const auto blocks = random_blocks<TypeParam>(4, 1);
  std::vector<float> x(512);
  std::vector<float> y(2);
  EXPECT_NO_THROW(matvec(QuantMatrix<TypeParam>{blocks, 2, 512}, x, y, pool));
  EXPECT_THROW(matvec(QuantMatrix<TypeParam>{blocks, 2, 500}, x, y, pool), InvalidArgument);
  EXPECT_THROW(matvec(QuantMatrix<TypeParam>{blocks, 3, 512}, x, y, pool), InvalidArgument);
  EXPECT_THROW(matvec(QuantMatrix<TypeParam>{blocks, 4, 256}, x, y, pool), InvalidArgument);
  EXPECT_THROW(matvec(QuantMatrix<TypeParam>{blocks, 2, 512}, std::span(x).first(256), y, pool), InvalidArgument);
  EXPECT_THROW(matvec(QuantMatrix<TypeParam>{blocks, 2, 512}, x, std::span(y).first(1), pool), InvalidArgument);
  const auto xq = test::random_q8k(1, 2);
  EXPECT_THROW(matvec(QuantMatrix<TypeParam>{blocks, 2, 512}, std::span<const BlockQ8K>(xq), y, pool), InvalidArgument);
}

template <class Block>
constexpr test::GgmlType ggml_type() {
  return std::is_same_v<Block, BlockQ5K> ? test::GgmlType::Q5_K : test::GgmlType::Q6_K;
}

TYPED_TEST(MatvecTest, MatchesGgmlMulMatOnRealisticShapes) {
  const test::GgmlOracle& oracle = test::GgmlOracle::load();
  ThreadPool pool(2);
  // Square projections, a down projection (14336 wide) and random bytes (heavy cancellation).
  for (auto [rows, cols, realistic] : {std::tuple<std::size_t, std::size_t, bool>{4096, 4096, true},
                                       {1024, 14336, true}, {512, 4096, false}}) {
    const std::size_t count = rows * cols / kBlockSize;
    const auto blocks = realistic ? test::realistic_blocks<TypeParam>(count, rows + cols)
                                  : random_blocks<TypeParam>(count, rows + cols);
    const std::vector<float> x = test::normal(cols, 3, 0.0f, 1.0f);
    test::GgmlMatVec ggml(oracle, ggml_type<TypeParam>(), rows, cols);
    ASSERT_EQ(ggml.weights().size(), blocks.size() * sizeof(TypeParam));
    std::memcpy(ggml.weights().data(), blocks.data(), ggml.weights().size());
    std::copy(x.begin(), x.end(), ggml.input().begin());
    ggml.compute(2);

    std::vector<float> y(rows);
    matvec(QuantMatrix<TypeParam>{blocks, rows, cols}, std::span<const float>(x), std::span(y), pool);
    std::vector<BlockQ8K> xq(cols / kBlockSize);
    quantize_q8k(x, xq);
    const std::size_t per_row = cols / kBlockSize;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::vector<TypeParam> row(blocks.begin() + r * per_row, blocks.begin() + (r + 1) * per_row);
      const test::ExactDot exact = test::exact_dot(row, xq);
      ASSERT_NEAR(y[r], ggml.output()[r], 2 * kRelativeTolerance * exact.magnitude) << rows << "x" << cols << " row " << r;
    }
  }
}

}  // namespace
}  // namespace brick::quant
