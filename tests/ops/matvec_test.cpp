#include "brick/ops/matvec.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/ops/dot.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using test::BackendTest;

class MatvecTest : public BackendTest {};
class MatvecVersusScalar : public BackendTest {};

TEST_P(MatvecTest, HandComputed) {
  const std::vector<float> w = {1.0f,  2.0f, 3.0f,  //
                                -1.0f, 0.5f, 4.0f};
  const std::vector<float> x = {2.0f, -2.0f, 0.25f};
  std::vector<float> y(2);
  matvec(w, 2, 3, x, y, backend());
  EXPECT_EQ(y, (std::vector<float>{2.0f - 4.0f + 0.75f, -2.0f - 1.0f + 1.0f}));
}

TEST_P(MatvecTest, EachRowIsExactlyThatBackendsDot) {
  // Odd shapes: every column tail, and the rows of 4, 8 and 16 vectors of 8 or 16 values, which
  // take a loop of their own.
  std::vector<std::size_t> lengths = brick::test::kAwkwardLengths;
  lengths.insert(lengths.end(), {32, 128, 256});
  for (std::size_t rows : {1, 2, 3, 5, 6, 7, 8, 16, 17, 33, 64}) {
    for (std::size_t cols : lengths) {
      const std::vector<float> w = brick::test::normal(rows * cols, rows + cols);
      const std::vector<float> x = brick::test::normal(cols, cols);
      std::vector<float> y(rows);
      matvec(w, rows, cols, x, y, backend());
      for (std::size_t r = 0; r < rows; ++r) {
        const float expected = dot(std::span(w).subspan(r * cols, cols), x, backend());
        ASSERT_EQ(y[r], expected) << rows << " x " << cols << " row " << r;
      }
    }
  }
}

TEST_P(MatvecTest, BadArgumentsThrow) {
  std::vector<float> w(12);
  std::vector<float> x(4);
  std::vector<float> y(3);
  EXPECT_THROW(matvec(w, 0, 4, {}, {}, backend()), InvalidArgument);
  EXPECT_THROW(matvec(w, 3, 0, {}, y, backend()), InvalidArgument);
  EXPECT_THROW(matvec(w, 4, 4, x, y, backend()), InvalidArgument);  // w too small
  EXPECT_THROW(matvec(w, 3, 4, std::span(x).first(3), y, backend()), InvalidArgument);
  EXPECT_THROW(matvec(w, 3, 4, x, std::span(y).first(2), backend()), InvalidArgument);
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
  EXPECT_THROW(matvec(w, huge, 4, x, y, backend()), InvalidArgument);  // rows * cols overflows
  // The output must not alias an input: every row reads all of x.
  std::vector<float> xy(4);
  std::vector<float> square(16);
  EXPECT_THROW(matvec(square, 4, 4, xy, xy, backend()), InvalidArgument);
  EXPECT_THROW(matvec(square, 4, 4, x, std::span(square).first(4), backend()), InvalidArgument);
}

TEST_P(MatvecVersusScalar, OddShapesWithinTheBrickTolerance) {
  for (std::size_t rows : {1, 3, 4, 9, 64, 129}) {
    for (std::size_t cols : brick::test::kAwkwardLengths) {
      // Projection-like magnitudes: small weights, unit activations.
      const std::vector<float> w = brick::test::normal(rows * cols, rows * cols, 0.0f, 0.05f);
      const std::vector<float> x = brick::test::normal(cols, cols + 1);
      std::vector<float> expected(rows);
      std::vector<float> actual(rows);
      matvec(w, rows, cols, x, expected, Backend::Scalar);
      matvec(w, rows, cols, x, actual, backend());
      const AssertionOutcome outcome = test::compare(actual, expected, MatvecOp::equivalence());
      EXPECT_TRUE(outcome.passed) << rows << " x " << cols << ": " << outcome.summary();
    }
  }
}

TEST_P(MatvecTest, TransposedHandComputed) {
  const std::vector<float> w = {1.0f,  2.0f, 3.0f,  //
                                -1.0f, 0.5f, 4.0f};
  const std::vector<float> x = {2.0f, -4.0f};
  std::vector<float> y(3);
  matvec_transposed(w, 2, 3, x, y, backend());
  EXPECT_EQ(y, (std::vector<float>{2.0f + 4.0f, 4.0f - 2.0f, 6.0f - 16.0f}));
}

TEST_P(MatvecTest, TransposedFollowsTheDoubleReferenceOnOddShapes) {
  for (std::size_t rows : {1, 2, 7, 64, 550}) {
    for (std::size_t cols : brick::test::kAwkwardLengths) {
      const std::vector<float> w = brick::test::normal(rows * cols, rows + 3 * cols);
      const std::vector<float> x = brick::test::normal(rows, rows, 0.0f, 0.1f);
      std::vector<float> y(cols + 1, -7.0f);  // the sentinel past the end must stay
      matvec_transposed(w, rows, cols, x, std::span(y).first(cols), backend());
      for (std::size_t c = 0; c < cols; ++c) {
        double exact = 0.0;
        double magnitude = 0.0;
        for (std::size_t r = 0; r < rows; ++r) {
          exact += static_cast<double>(x[r]) * w[r * cols + c];
          magnitude += std::abs(static_cast<double>(x[r]) * w[r * cols + c]);
        }
        ASSERT_NEAR(y[c], exact, 1e-6 * magnitude + 1e-30) << rows << " x " << cols << " column " << c;
      }
      ASSERT_EQ(y[cols], -7.0f) << rows << " x " << cols;
    }
  }
}

TEST_P(MatvecTest, TransposedBadArgumentsThrow) {
  std::vector<float> w(12);
  std::vector<float> x(3);
  std::vector<float> y(4);
  EXPECT_THROW(matvec_transposed(w, 0, 4, {}, y, backend()), InvalidArgument);
  EXPECT_THROW(matvec_transposed(w, 4, 4, x, y, backend()), InvalidArgument);  // w too small
  EXPECT_THROW(matvec_transposed(w, 3, 4, std::span(x).first(2), y, backend()), InvalidArgument);
  EXPECT_THROW(matvec_transposed(w, 3, 4, x, std::span(y).first(3), backend()), InvalidArgument);
  EXPECT_THROW(matvec_transposed(w, 3, 4, x, std::span(w).first(4), backend()), InvalidArgument);  // y aliases w
}

TEST_P(MatvecTest, TransposedBatchRowsAreExactlyThatBackendsTransposedMatvec) {
  // x rows go four at a time, then two, then one: every mix of those, and every column tail.
  for (std::size_t count : {1, 2, 3, 4, 5, 6, 7, 8}) {
    for (std::size_t rows : {1, 7, 64, 130}) {
      for (std::size_t cols : brick::test::kAwkwardLengths) {
        const std::vector<float> w = brick::test::normal(rows * cols, rows + 5 * cols);
        const std::vector<float> x = brick::test::normal(count * rows, count + rows, 0.0f, 0.1f);
        std::vector<float> y(count * cols + 1, -7.0f);  // the sentinel past the end must stay
        matvec_transposed_batch(w, rows, cols, x, count, std::span(y).first(count * cols), backend());
        std::vector<float> expected(cols);
        for (std::size_t i = 0; i < count; ++i) {
          matvec_transposed(w, rows, cols, std::span(x).subspan(i * rows, rows), expected, backend());
          for (std::size_t c = 0; c < cols; ++c) {
            ASSERT_EQ(y[i * cols + c], expected[c])
                << count << " rows of " << rows << " x " << cols << ", row " << i << " column " << c;
          }
        }
        ASSERT_EQ(y[count * cols], -7.0f) << count << " rows of " << rows << " x " << cols;
      }
    }
  }
}

TEST_P(MatvecTest, TransposedBatchBadArgumentsThrow) {
  std::vector<float> w(12);
  std::vector<float> x(6);
  std::vector<float> y(8);
  EXPECT_NO_THROW(matvec_transposed_batch(w, 3, 4, x, 2, y, backend()));
  EXPECT_THROW(matvec_transposed_batch(w, 3, 4, {}, 0, {}, backend()), InvalidArgument);
  EXPECT_THROW(matvec_transposed_batch(w, 3, 4, std::span(x).first(5), 2, y, backend()), InvalidArgument);
  EXPECT_THROW(matvec_transposed_batch(w, 3, 4, x, 2, std::span(y).first(7), backend()), InvalidArgument);
  EXPECT_THROW(matvec_transposed_batch(w, 3, 4, x, 3, y, backend()), InvalidArgument);  // x holds 2 rows
  EXPECT_THROW(matvec_transposed_batch(w, 3, 4, std::span(w).first(6), 2, std::span(w).last(8), backend()),
               InvalidArgument);  // y aliases w
}

BRICK_OPS_INSTANTIATE(MatvecTest, test::kAllBackends);
BRICK_OPS_INSTANTIATE(MatvecVersusScalar, test::kSimdBackends);

}  // namespace
}  // namespace brick::ops
