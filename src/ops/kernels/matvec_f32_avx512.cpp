#include "ops/kernels/dot_avx512.hpp"
#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {

// One row after another: the weights stream through memory in a single sequential pass, which the
// hardware prefetchers follow best (measured: interleaving 2 or 4 rows to share x loads was slower,
// and x stays in L1 anyway).
void matvec_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot_f32x16(w + r * cols, x, cols);
}

}  // namespace brick::ops::kernels
