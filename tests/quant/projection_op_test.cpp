// ProjectionOp and EmbeddingOp over every weight type Brick computes with: the projection is the
// mat-vec, checked live against the scalar reference in a ComputeBrick; the embedding is the
// dequantized row; both count their bytes and reject what they cannot run with typed errors.
#include "brick/quant/projection_op.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "brick/core/compute_brick.hpp"
#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/quantize.hpp"
#include "ops/backend_test.hpp"
#include "quant/matvec_rows.hpp"
#include "quant/weight_matrices.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

constexpr std::size_t kRows = 96;
constexpr std::size_t kCols = 1024;

TEST(ProjectionOp, IsTheMatvecOfEveryTypeAndPassesItsEquivalenceCheck) {
  ThreadPool pool(2);
  const std::vector<float> x = test::normal(kCols, 5);
  const BrickPolicy check_all{CheckPolicy::All, OnFailure::Error, false};
  for (const TensorType type : test::computable_types()) {
    const test::OwnedMatrix w = test::weight_matrix(type, kRows, kCols, 3);
    const ProjectionOp op(BrickId::OutputProjection, "attn_output", w.view(), pool);
    EXPECT_EQ(op.name(), "attn_output");
    EXPECT_EQ(op.output_size({x}), kRows);
    EXPECT_DOUBLE_EQ(op.cost({x}).bytes, static_cast<double>(w.bytes.size()) + 4.0 * (kCols + kRows)) << name(type);
    for (const Backend backend : kConcreteBackends) {
      if (!is_supported(backend)) continue;
      std::vector<float> out(kRows), expected(kRows);
      op.run({x}, out, backend);
      matvec(w.view(), x, expected, pool, backend);
      EXPECT_EQ(out, expected) << name(type) << " " << name(backend);
    }
    ComputeBrick brick(ProjectionOp(BrickId::OutputProjection, "attn_output", w.view(), pool),
                       {ProjectionOp::equivalence(), Finite{}}, Backend::Auto, {}, check_all);
    std::vector<float> out(kRows);
    const auto report = brick.run({x}, out);
    ASSERT_TRUE(report.has_value()) << name(type) << ": " << message(report.error());
    EXPECT_TRUE(report->assertions[0].evaluated && report->assertions[0].passed)
        << name(type) << ": " << report->assertions[0].summary();
  }
}

// The names of the kernels the calling thread begins.
struct KernelNames final : KernelRecorder {
  std::vector<std::string> names;
  void kernel_begin(std::string_view name, Backend, std::uint64_t) noexcept override { names.emplace_back(name); }
  void kernel_end(const KernelWork&, std::uint64_t) noexcept override {}
  void transfer(const TransferRecord&) noexcept override {}
  void parallel_call(const ParallelCall&) noexcept override {}
};

using ProjectionBatch = ops::test::BackendTest;

TEST_P(ProjectionBatch, IsTheMatvecOfEachTokenOnEitherSideOfTheGemmKernelsBatch) {
  // Every batch from one token to past a tile of 16: below the kernel's batch the pass runs the
  // dot kernel once per token, from it on the GEMM kernel, and every output has the mat-vec's bits.
  ThreadPool pool(2);
  const Backend backend = GetParam();
  for (const TensorType type : test::computable_types()) {
    const test::OwnedMatrix w = test::weight_matrix(type, kRows, kCols, 7);
    const ProjectionOp op(BrickId::OutputProjection, "attn_output", w.view(), pool);
    {
      const detail::RowSource source = detail::row_source(w.view(), backend);
      for (std::size_t tokens = 1; tokens <= 18; ++tokens) {
        const std::vector<float> x = test::normal(tokens * kCols, 11 + tokens);
        std::vector<float> out(tokens * kRows);
        KernelNames recorded;
        KernelRecorder* const previous = set_kernel_recorder(&recorded);
        op.run({x, tokens}, out, backend);
        set_kernel_recorder(previous);
        const std::string_view pass = tokens == 1 ? source.kernel_name
                                      : tokens >= source.gemm_batch ? source.gemm_name
                                                                    : source.kernel_name;
        EXPECT_NE(std::find(recorded.names.begin(), recorded.names.end(), pass), recorded.names.end())
            << name(type) << " " << name(backend) << " " << tokens << " tokens: no " << pass;
        for (std::size_t t = 0; t < tokens; ++t) {
          std::vector<float> expected(kRows);
          matvec(w.view(), std::span(x).subspan(t * kCols, kCols), expected, pool, backend);
          ASSERT_EQ(std::vector<float>(out.begin() + static_cast<std::ptrdiff_t>(t * kRows),
                                       out.begin() + static_cast<std::ptrdiff_t>((t + 1) * kRows)),
                    expected)
              << name(type) << " " << name(backend) << " token " << t << " of " << tokens;
        }
      }
    }
  }
}

BRICK_OPS_INSTANTIATE(ProjectionBatch, ops::test::kAllBackends);

TEST(ProjectionOp, RejectsWeightsItCannotCompute) {
  ThreadPool pool(1);
  const std::vector<std::byte> q4_0(*row_bytes(TensorType::Q4_0, kCols) * kRows);
  EXPECT_THROW(ProjectionOp(BrickId::OutputProjection, "w", WeightMatrix(TensorType::Q4_0, q4_0, kRows, kCols), pool),
               InvalidArgument);
  const test::OwnedMatrix q8 = test::weight_matrix(TensorType::Q8_0, kRows, kCols, 1);
  EXPECT_THROW(ProjectionOp(BrickId::OutputProjection, "w", WeightMatrix(TensorType::Q8_0, q8.bytes, kRows, kCols - 16), pool),
               InvalidArgument);  // not whole blocks of 32
  EXPECT_THROW(ProjectionOp(BrickId::OutputProjection, "w", WeightMatrix(TensorType::Q8_0, q8.bytes, kRows + 1, kCols), pool),
               InvalidArgument);  // too few bytes
  const ProjectionOp op(BrickId::OutputProjection, "w", q8.view(), pool);
  std::vector<float> x(kCols), out(kRows);
  EXPECT_THROW(op.run({std::span(x).first(kCols - 1)}, out, Backend::Auto), InvalidArgument);
}

TEST(EmbeddingOp, RowsAreTheDequantizedRowsOfEveryType) {
  for (const TensorType type : test::computable_types()) {
    const test::OwnedMatrix table = test::weight_matrix(type, kRows, kCols, 9);
    const EmbeddingOp op(table.view());
    const std::int32_t first = 0;
    EXPECT_EQ(op.output_size({std::span(&first, 1)}), kCols);
    const std::size_t row_bytes = table.bytes.size() / kRows;
    for (const std::int32_t token : {0, 1, 57, static_cast<std::int32_t>(kRows - 1)}) {
      std::vector<float> out(kCols), expected(kCols), row(kCols);
      op.run({std::span(&token, 1)}, out, Backend::Auto);
      dequantize(type, std::span(table.bytes).subspan(static_cast<std::size_t>(token) * row_bytes, row_bytes), expected);
      dequantize_row(table.view(), static_cast<std::size_t>(token), row);
      EXPECT_EQ(out, expected) << name(type) << " token " << token;
      EXPECT_EQ(row, expected) << name(type) << " token " << token;
    }
    std::vector<float> out(kCols);
    for (const std::int32_t bad : {-1, static_cast<std::int32_t>(kRows)}) {
      EXPECT_THROW(op.run({std::span(&bad, 1)}, out, Backend::Auto), InvalidArgument) << name(type);
    }
    // A batch of ids gives their rows one after another.
    const std::vector<std::int32_t> batch = {3, 0, 3};
    std::vector<float> rows(3 * kCols), one(kCols);
    op.run({batch}, rows, Backend::Auto);
    dequantize_row(table.view(), 3, one);
    EXPECT_TRUE(std::equal(one.begin(), one.end(), rows.begin() + 2 * kCols)) << name(type);
    std::vector<float> short_row(kCols - 1);
    EXPECT_THROW(dequantize_row(table.view(), 0, short_row), InvalidArgument) << name(type);
  }
}

}  // namespace
}  // namespace brick::quant
