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

using MatvecKernel = void (*)(const float*, std::size_t, std::size_t, const float*,
                              float*) noexcept;

// The checks both products share, for `op`: a rows x cols matrix w, an input of `inputs` values
// and an output of `outputs` (named as the dimension each must equal), y apart from w and x; then
// the backend's kernel.
void checked_product(const char* op, std::span<const float> w, std::size_t rows, std::size_t cols,
                     std::span<const float> x, const char* x_size, std::size_t inputs, std::span<float> y,
                     const char* y_size, std::size_t outputs, Backend backend, MatvecKernel scalar,
                     MatvecKernel avx2, MatvecKernel avx512) {
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
  detail::pick<MatvecKernel>(resolve(backend), scalar, avx2, avx512)(w.data(), rows, cols, x.data(), y.data());
}

}  // namespace

void matvec(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
            std::span<float> y, Backend backend) {
  checked_product("matvec", w, rows, cols, x, "cols", cols, y, "rows", rows, backend, kernels::matvec_f32_scalar,
                  kernels::matvec_f32_avx2, kernels::matvec_f32_avx512);
}

void matvec_transposed(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                       std::span<float> y, Backend backend) {
  checked_product("matvec_transposed", w, rows, cols, x, "rows", rows, y, "cols", cols, backend,
                  kernels::matvec_transposed_f32_scalar, kernels::matvec_transposed_f32_avx2,
                  kernels::matvec_transposed_f32_avx512);
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
