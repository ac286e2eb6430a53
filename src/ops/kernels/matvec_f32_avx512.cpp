#include "ops/kernels/dot_rows_avx512.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

// Four rows at a time: four independent weight streams keep the memory system busy, and each x
// vector is loaded once for all four.
void matvec_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  constexpr std::size_t kRowsPerStep = 4;
  std::size_t r = 0;
  for (; r + kRowsPerStep <= rows; r += kRowsPerStep) {
    dot_rows_f32x16<kRowsPerStep>(w + r * cols, cols, x, cols, y + r);
  }
  for (; r < rows; ++r) dot_rows_f32x16<1>(w + r * cols, cols, x, cols, y + r);
}

}  // namespace brick::ops::kernels
