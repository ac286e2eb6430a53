// ProjectionOp and EmbeddingOp over every weight type Brick computes with: the projection is the
// mat-vec, checked live against the scalar reference in a ComputeBrick; the embedding is the
// dequantized row; both count their bytes and reject what they cannot run with typed errors.
#include "brick/quant/projection_op.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "brick/core/compute_brick.hpp"
#include "brick/core/error.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/quantize.hpp"
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
