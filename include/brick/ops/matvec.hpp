#pragma once
// Float matrix-vector product: one token through a dense f32 projection.
#include <cstddef>
#include <span>
#include <string>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

// y[r] = sum_c w[r * cols + c] * x[c] for r < rows: w is rows x cols, row-major (ggml's layout of
// a weight with ne0 = cols). Each row is a dot product with the accuracy described in dot.hpp.
// y must not overlap w or x. Throws InvalidArgument when rows or cols is zero, w does not hold
// rows * cols floats, x does not hold cols, y does not hold rows, or y overlaps an input.
void matvec(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
            std::span<float> y, Backend backend = Backend::Auto);

// y[c] = sum_r x[r] * w[r * cols + c] for c < cols: y = w^T x, with x of rows values and y of cols
// (attention's weighted sum of value rows). Each y[c] adds the rows in order, with one rounding per
// row (an FMA on AVX2 and AVX-512). Throws InvalidArgument as matvec() does, with x and y swapped.
void matvec_transposed(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                       std::span<float> y, Backend backend = Backend::Auto);

// matvec_transposed for `count` rows of x at once (x holds count x rows values, y count x cols):
// y[i * cols + c] = sum_r x[i * rows + r] * w[r * cols + c], row i of y bit for bit what
// matvec_transposed gives for row i of x. The rows share each load of w (the heads of a token that
// weigh the same value rows). Throws InvalidArgument as matvec_transposed() does, and when count is
// zero.
void matvec_transposed_batch(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                             std::size_t count, std::span<float> y, Backend backend = Backend::Auto);

// One token through a projection; the BrickId says which one (QkvProjection, DownProjection, ...).
class MatvecOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> w;
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::span<const float> x;
  };

  // Labelled "matvec.<BrickId name>" unless a label is given.
  explicit MatvecOp(BrickId id, std::string label = {});

  std::size_t output_size(const Input& input) const noexcept { return input.rows; }
  // 1 token, 2 * rows * cols FLOPs, 4 * (rows * cols + cols) read + 4 * rows written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  // As for dot (dot.hpp): float accumulation against the double reference.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 1e-4, 1e-4}; }
};

}  // namespace brick::ops
