// matvec for every weight format of the kernel table: every backend and pool size against the exact
// per-row value, bit for bit the selected kernel on x converted as llama.cpp converts it, bad
// shapes, and ggml's mul_mat on realistic shapes.
#include "brick/quant/matvec.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <tuple>
#include <vector>

#include "brick/core/error.hpp"
#include "quant/dot_formats_testing.hpp"
#include "quant/weight_matrices.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

using test::FormatTesting;

template <class Format>
std::vector<typename Format::Weight> row_of(const std::vector<typename Format::Weight>& blocks, std::size_t r,
                                            std::size_t per_row) {
  return {blocks.begin() + static_cast<std::ptrdiff_t>(r * per_row), blocks.begin() + static_cast<std::ptrdiff_t>((r + 1) * per_row)};
}

template <class Format>
WeightMatrix view(const std::vector<typename Format::Weight>& blocks, std::size_t rows, std::size_t cols) {
  return {Format::kType, std::as_bytes(std::span(blocks)), rows, cols};
}

template <class T>
class MatvecTest : public ::testing::Test {};
using Formats = ::testing::Types<detail::F32Format, detail::F16Format, detail::BF16Format, detail::Q80Format,
                                 detail::Q4KFormat, detail::Q5KFormat, detail::Q6KFormat>;
TYPED_TEST_SUITE(MatvecTest, Formats);

TYPED_TEST(MatvecTest, EveryBackendAndPoolSizeMatchesTheExactRows) {
  using Testing = FormatTesting<TypeParam>;
  for (std::size_t threads : {1u, 2u, 3u}) {
    ThreadPool pool(threads);
    for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{1, 256}, {3, 768}, {37, 1024}, {130, 4096}}) {
      const std::size_t per_row = cols / TypeParam::kValues;
      const auto blocks = Testing::random_weights(rows * per_row, rows * 31 + cols);
      const std::vector<float> x = test::normal(cols, cols + 5);
      const auto xa = Testing::activations_from(x);
      for (Backend backend : kConcreteBackends) {
        if (!is_supported(backend)) continue;
        std::vector<float> y(rows, -1.0f);
        matvec(view<TypeParam>(blocks, rows, cols), std::span<const float>(x), std::span(y), pool, backend);
        for (std::size_t r = 0; r < rows; ++r) {
          const test::ExactDot exact = Testing::exact(row_of<TypeParam>(blocks, r, per_row), xa);
          ASSERT_NEAR(y[r], exact.value, Testing::tolerance(per_row) * exact.magnitude + exact.flushable)
              << fmt::format("{} {}x{} threads={} row {}", name(backend), rows, cols, threads, r);
        }
      }
    }
  }
}

// matvec converts x once, as ggml-cpu's from_float does for the type, and runs the kernel the
// backend selects on each row: the same bits as that kernel on the converted row.
TYPED_TEST(MatvecTest, GivesTheSelectedKernelsBitsOnTheConvertedInput) {
  using Testing = FormatTesting<TypeParam>;
  ThreadPool pool(2);
  const std::size_t rows = 19;
  const std::size_t cols = 512;
  const std::size_t per_row = cols / TypeParam::kValues;
  const auto blocks = Testing::random_weights(rows * per_row, 77);
  for (const test::Pattern& pattern : test::adversarial_patterns(cols, 9)) {
    const auto xa = Testing::activations_from(pattern.values);
    for (Backend backend : kConcreteBackends) {
      if (!is_supported(backend)) continue;
      std::vector<float> y(rows);
      matvec(view<TypeParam>(blocks, rows, cols), std::span<const float>(pattern.values), std::span(y), pool, backend);
      const auto& kernel = detail::select_kernel<TypeParam>(backend);
      for (std::size_t r = 0; r < rows; ++r) {
        const float expected = kernel.row(blocks.data() + r * per_row, xa.data(), per_row);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(y[r]), std::bit_cast<std::uint32_t>(expected))
            << pattern.name << " " << name(backend) << " row " << r;
      }
    }
  }
}

TYPED_TEST(MatvecTest, RejectsBadShapes) {
  using Testing = FormatTesting<TypeParam>;
  ThreadPool pool(1);
  const std::size_t per_row = 512 / TypeParam::kValues;
  const auto blocks = Testing::random_weights(2 * per_row, 1);
  std::vector<float> x(512);
  std::vector<float> y(2);
  EXPECT_NO_THROW(matvec(view<TypeParam>(blocks, 2, 512), x, y, pool));
  EXPECT_THROW(matvec(view<TypeParam>(blocks, 3, 512), x, y, pool), InvalidArgument);  // too few bytes
  EXPECT_THROW(matvec(view<TypeParam>(blocks, 4, 256), x, y, pool), InvalidArgument);  // x too long
  EXPECT_THROW(matvec(view<TypeParam>(blocks, 2, 512), std::span(x).first(256), y, pool), InvalidArgument);
  EXPECT_THROW(matvec(view<TypeParam>(blocks, 2, 512), x, std::span(y).first(1), pool), InvalidArgument);
  if constexpr (TypeParam::kValues > 1) {
    EXPECT_THROW(matvec(view<TypeParam>(blocks, 2, 500), std::span(x).first(500), y, pool), InvalidArgument);
  }
  const auto xq = test::random_q8k(2, 2);
  if constexpr (TypeParam::kActivation == detail::ActivationType::Q8K) {
    EXPECT_NO_THROW(matvec(view<TypeParam>(blocks, 2, 512), std::span<const BlockQ8K>(xq), y, pool));
    EXPECT_THROW(matvec(view<TypeParam>(blocks, 2, 512), std::span<const BlockQ8K>(xq).first(1), y, pool), InvalidArgument);
    auto inconsistent = xq;  // bsums the SIMD kernels would take as given
    inconsistent[1].bsums[0] = static_cast<std::int16_t>(inconsistent[1].bsums[0] + 1);
    EXPECT_THROW(matvec(view<TypeParam>(blocks, 2, 512), std::span<const BlockQ8K>(inconsistent), y, pool),
                 InvalidArgument);
  } else {
    // Only the k-quants take Q8_K activations.
    EXPECT_THROW(matvec(view<TypeParam>(blocks, 2, 512), std::span<const BlockQ8K>(xq), y, pool), InvalidArgument);
  }
}

TYPED_TEST(MatvecTest, MatchesGgmlMulMatOnRealisticShapes) {
  using Testing = FormatTesting<TypeParam>;
  const test::GgmlOracle& oracle = test::GgmlOracle::load();
  ThreadPool pool(2);
  // Square projections, a down projection (14336 wide) and random bytes (heavy cancellation).
  for (auto [rows, cols, realistic] : {std::tuple<std::size_t, std::size_t, bool>{4096, 4096, true},
                                       {1024, 14336, true}, {512, 4096, false}}) {
    const test::OwnedMatrix w = test::weight_matrix(TypeParam::kType, rows, cols, rows + cols, realistic);
    const std::vector<float> x = test::normal(cols, 3, 0.0f, 1.0f);
    test::GgmlMatVec ggml(oracle, w.ggml_type(), rows, cols);
    ASSERT_EQ(ggml.weights().size(), w.bytes.size());
    std::memcpy(ggml.weights().data(), w.bytes.data(), w.bytes.size());
    std::copy(x.begin(), x.end(), ggml.input().begin());
    ggml.compute(2);

    std::vector<float> y(rows);
    matvec(w.view(), std::span<const float>(x), std::span(y), pool);
    const auto xa = Testing::activations_from(x);
    const std::size_t per_row = cols / TypeParam::kValues;
    const auto* blocks = reinterpret_cast<const typename TypeParam::Weight*>(w.bytes.data());
    for (std::size_t r = 0; r < rows; ++r) {
      const std::vector<typename TypeParam::Weight> row(blocks + r * per_row, blocks + (r + 1) * per_row);
      const test::ExactDot exact = Testing::exact(row, xa);
      ASSERT_NEAR(y[r], ggml.output()[r], 2 * std::max(1e-6, Testing::tolerance(per_row)) * exact.magnitude + exact.flushable)
          << rows << "x" << cols << " row " << r;
    }
  }
}

}  // namespace
}  // namespace brick::quant
