#include "ops/kernels/dot_avx2.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx2.hpp"

namespace brick::ops::kernels {

// One row after another: the weights stream through memory in a single sequential pass, which the
// hardware prefetchers follow best (measured: interleaving 2 or 4 rows to share x loads was slower,
// and x stays in L1 anyway).
void matvec_f32_avx2(const float* w, std::size_t rows, std::size_t cols, const float* x,
                     float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot_f32x8(w + r * cols, x, cols);
}

// Four vectors of y at a time accumulate down the rows (one broadcast of x[r], four loads and four
// FMAs per row), then one vector, then a masked tail.
void matvec_transposed_f32_avx2(const float* w, std::size_t rows, std::size_t cols, const float* x,
                                float* y) noexcept {
  std::size_t c = 0;
  for (; c + 4 * kLanes256 <= cols; c += 4 * kLanes256) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (std::size_t r = 0; r < rows; ++r) {
      const __m256 xr = _mm256_set1_ps(x[r]);
      const float* row = w + r * cols + c;
      for (std::size_t k = 0; k < 4; ++k) acc[k] = _mm256_fmadd_ps(xr, _mm256_loadu_ps(row + k * kLanes256), acc[k]);
    }
    for (std::size_t k = 0; k < 4; ++k) _mm256_storeu_ps(y + c + k * kLanes256, acc[k]);
  }
  for (; c < cols; c += kLanes256) {
    const std::size_t n = cols - c < kLanes256 ? cols - c : kLanes256;
    const __m256i mask = tail_mask8(n);
    __m256 acc = _mm256_setzero_ps();
    for (std::size_t r = 0; r < rows; ++r) {
      acc = _mm256_fmadd_ps(_mm256_set1_ps(x[r]), _mm256_maskload_ps(w + r * cols + c, mask), acc);
    }
    _mm256_maskstore_ps(y + c, mask, acc);
  }
}

}  // namespace brick::ops::kernels
