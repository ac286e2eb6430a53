#include "ops/kernels/dot_rows_avx2.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

// Two rows at a time: two weight streams share each x load, and 2 x 4 accumulators plus 4 x
// vectors still fit the 16 ymm registers.
void matvec_f32_avx2(const float* w, std::size_t rows, std::size_t cols, const float* x,
                     float* y) noexcept {
  constexpr std::size_t kRowsPerStep = 2;
  std::size_t r = 0;
  for (; r + kRowsPerStep <= rows; r += kRowsPerStep) {
    dot_rows_f32x8<kRowsPerStep>(w + r * cols, cols, x, cols, y + r);
  }
  for (; r < rows; ++r) dot_rows_f32x8<1>(w + r * cols, cols, x, cols, y + r);
}

}  // namespace brick::ops::kernels
