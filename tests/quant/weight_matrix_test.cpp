// WeightMatrix: the tagged view every mat-vec and fused op takes. Its validation names what is
// wrong, a typed QuantMatrix converts to it, rows dequantize like the type's own dequantizer, and
// an F32 matrix goes through the same mat-vec and fused paths as the k-quants, mixed with them.
#include "brick/quant/weight_matrix.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/fused_ops.hpp"
#include "brick/quant/matvec.hpp"
#include "quant/kquant_blocks.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

TEST(WeightMatrix, ValidationNamesTheMatrixAndTheProblem) {
  const auto blocks = test::random_q5k(4, 1);
  const WeightMatrix w = Q5KMatrix{blocks, 2, 512};
  EXPECT_EQ(w.type(), TensorType::Q5_K);
  EXPECT_EQ(w.row_bytes(), 2 * sizeof(BlockQ5K));
  EXPECT_NO_THROW(validate(w, "w"));
  const auto message = [](const WeightMatrix& m) {
    try {
      validate(m, "attn_q");
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(Q5KMatrix{blocks, 3, 512}).find("attn_q"), std::string::npos);
  EXPECT_NE(message(WeightMatrix(TensorType::Q4_0, std::as_bytes(std::span(blocks)), 2, 512)).find("q4_0"),
            std::string::npos);
  EXPECT_NE(message(WeightMatrix(TensorType::Q5_K, std::as_bytes(std::span(blocks)), 2, 500)).find("500"),
            std::string::npos);
  EXPECT_NE(message(WeightMatrix(TensorType::Q5_K, {}, 0, 512)), "no error");
}

TEST(WeightMatrix, DequantizedRowsMatchTheTypesDequantizer) {
  const auto blocks = test::random_q6k(6, 2);
  const WeightMatrix w = Q6KMatrix{blocks, 3, 512};
  std::vector<float> row(512), expected(512);
  for (std::size_t r = 0; r < 3; ++r) {
    dequantize_row(w, r, row);
    dequantize_q6k(std::span(blocks).subspan(2 * r, 2), expected);
    EXPECT_EQ(row, expected) << r;
  }
  EXPECT_THROW(dequantize_row(w, 3, row), InvalidArgument);
  EXPECT_THROW(dequantize_row(w, 0, std::span(row).first(256)), InvalidArgument);
}

TEST(WeightMatrix, F32MatVecAndFusedOpsMixWithKQuants) {
  ThreadPool pool(2);
  constexpr std::size_t kCols = 512;
  const std::vector<float> wq = test::normal(8 * kCols, 3);
  const WeightMatrix q(TensorType::F32, std::as_bytes(std::span(wq)), 8, kCols);
  const auto k_blocks = test::random_q5k(4 * kCols / kBlockSize, 4);
  const auto v_blocks = test::random_q6k(4 * kCols / kBlockSize, 5);
  const WeightMatrix k = Q5KMatrix{k_blocks, 4, kCols};
  const WeightMatrix v = Q6KMatrix{v_blocks, 4, kCols};
  const std::vector<float> x = test::normal(kCols, 6);
  for (Backend backend : {Backend::Scalar, Backend::Auto}) {
    std::vector<float> yq(8), yk(4), yv(4);
    matvec(q, x, yq, pool, backend);
    matvec(k, x, yk, pool, backend);
    matvec(v, x, yv, pool, backend);
    for (std::size_t r = 0; r < 8; ++r) {
      double exact = 0;
      for (std::size_t c = 0; c < kCols; ++c) exact += static_cast<double>(wq[r * kCols + c]) * x[c];
      EXPECT_NEAR(yq[r], exact, 1e-4 * (1 + std::abs(exact))) << r;
    }
    FusedQKVOp fused(q, k, v, 2, 1, 4, pool);
    std::vector<float> out(16);
    fused.run({x}, out, resolve(backend));
    EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 8), yq);
    EXPECT_EQ(std::vector<float>(out.begin() + 8, out.begin() + 12), yk);
    EXPECT_EQ(std::vector<float>(out.begin() + 12, out.end()), yv);
  }
}

}  // namespace
}  // namespace brick::quant
