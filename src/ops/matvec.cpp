#include "brick/ops/matvec.hpp"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "brick/core/error.hpp"
#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

using MatvecKernel = void (*)(const float*, std::size_t, std::size_t, const float*, float*) noexcept;
using TransposedKernel = void (*)(const float*, std::size_t, std::size_t, const float*, std::size_t, float*) noexcept;

// The checks the products share, for `op`: a rows x cols matrix w, an input of `inputs` values and
// an output of `outputs` (named as the dimension each must equal), y apart from w and x.
void require_product(const char* op, std::span<const float> w, std::size_t rows, std::size_t cols,
                     std::span<const float> x, const char* x_size, std::size_t inputs, std::span<float> y,
                     const char* y_size, std::size_t outputs) {
  if (rows == 0 || cols == 0) {
    throw InvalidArgument(
        fmt::format("{}: the matrix is {} x {}; both dimensions must be positive", op, rows, cols));
  }
  if (rows > std::numeric_limits<std::size_t>::max() / cols) {
    throw InvalidArgument(fmt::format("{}: {} x {} elements do not fit in size_t", op, rows, cols));
  }
  detail::require_same_size(op, "w", w.size(), "rows x cols", rows * cols);
  detail::require_same_size(op, "x", x.size(), x_size, inputs);
  detail::require_same_size(op, "y", y.size(), y_size, outputs);
  detail::require_disjoint(op, "y", y, "w", w);
  detail::require_disjoint(op, "y", y, "x", x);
}

void transposed_product(const char* op, std::span<const float> w, std::size_t rows, std::size_t cols,
                        std::span<const float> x, std::size_t count, std::span<float> y, Backend backend) {
  const bool one = count == 1;
  if (count == 0 || rows > std::numeric_limits<std::size_t>::max() / count ||
      cols > std::numeric_limits<std::size_t>::max() / count) {
    throw InvalidArgument(
        fmt::format("{}: {} rows of x and y of {} and {} values; expected a positive count "
                    "whose rows fit in size_t",
                    op, count, rows, cols));
  }
  require_product(op, w, rows, cols, x, one ? "rows" : "count x rows", count * rows, y, one ? "cols" : "count x cols",
                  count * cols);
  detail::pick<TransposedKernel>(resolve(backend), kernels::matvec_transposed_f32_scalar,
                                 kernels::matvec_transposed_f32_avx2, kernels::matvec_transposed_f32_avx512)(
      w.data(), rows, cols, x.data(), count, y.data());
}

}  // namespace

void matvec(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
            std::span<float> y, Backend backend) {
  require_product("matvec", w, rows, cols, x, "cols", cols, y, "rows", rows);
  detail::pick<MatvecKernel>(resolve(backend), kernels::matvec_f32_scalar, kernels::matvec_f32_avx2,
                             kernels::matvec_f32_avx512)(w.data(), rows, cols, x.data(), y.data());
}

void matvec_transposed(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                       std::span<float> y, Backend backend) {
  transposed_product("matvec_transposed", w, rows, cols, x, 1, y, backend);
}

void matvec_transposed_batch(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                             std::size_t count, std::span<float> y, Backend backend) {
  transposed_product("matvec_transposed_batch", w, rows, cols, x, count, y, backend);
}

MatvecOp::MatvecOp(BrickId id, std::string label)
    : OpIdentity(id, label.empty() ? fmt::format("matvec.{}", brick::name(id)) : std::move(label)) {
}

OpCost MatvecOp::cost(const Input& input) const noexcept {
  const auto rows = static_cast<double>(input.rows);
  const auto cols = static_cast<double>(input.cols);
  return OpCost{1, 2.0 * rows * cols, 4.0 * (rows * cols + cols + rows)};
}

void MatvecOp::run(const Input& input, std::span<float> out, Backend backend) const {
  matvec(input.w, input.rows, input.cols, input.x, out, backend);
}

}  // namespace brick::ops
