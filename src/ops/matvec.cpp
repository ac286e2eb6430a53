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

}  // namespace

void matvec(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
            std::span<float> y, Backend backend) {
  if (rows == 0 || cols == 0) {
    throw InvalidArgument(
        fmt::format("matvec: the matrix is {} x {}; both dimensions must be positive", rows, cols));
  }
  if (rows > std::numeric_limits<std::size_t>::max() / cols) {
    throw InvalidArgument(fmt::format("matvec: {} x {} elements do not fit in size_t", rows, cols));
  }
  detail::require_same_size("matvec", "w", w.size(), "rows x cols", rows * cols);
  detail::require_same_size("matvec", "x", x.size(), "cols", cols);
  detail::require_same_size("matvec", "y", y.size(), "rows", rows);
  detail::require_disjoint("matvec", "y", y, "w", w);
  detail::require_disjoint("matvec", "y", y, "x", x);
  const MatvecKernel kernel =
      detail::pick<MatvecKernel>(resolve(backend), kernels::matvec_f32_scalar,
                                 kernels::matvec_f32_avx2, kernels::matvec_f32_avx512);
  kernel(w.data(), rows, cols, x.data(), y.data());
}

void matvec_transposed(std::span<const float> w, std::size_t rows, std::size_t cols, std::span<const float> x,
                       std::span<float> y, Backend backend) {
  if (rows == 0 || cols == 0) {
    throw InvalidArgument(fmt::format("matvec_transposed: the matrix is {} x {}; both dimensions must be positive",
                                      rows, cols));
  }
  if (rows > std::numeric_limits<std::size_t>::max() / cols) {
    throw InvalidArgument(fmt::format("matvec_transposed: {} x {} elements do not fit in size_t", rows, cols));
  }
  detail::require_same_size("matvec_transposed", "w", w.size(), "rows x cols", rows * cols);
  detail::require_same_size("matvec_transposed", "x", x.size(), "rows", rows);
  detail::require_same_size("matvec_transposed", "y", y.size(), "cols", cols);
  detail::require_disjoint("matvec_transposed", "y", y, "w", w);
  detail::require_disjoint("matvec_transposed", "y", y, "x", x);
  const MatvecKernel kernel = detail::pick<MatvecKernel>(resolve(backend), kernels::matvec_transposed_f32_scalar,
                                                         kernels::matvec_transposed_f32_avx2,
                                                         kernels::matvec_transposed_f32_avx512);
  kernel(w.data(), rows, cols, x.data(), y.data());
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
