#include "ops/kernels/dot_avx512.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/kernels/simd_avx512.hpp"

namespace brick::ops::kernels {

// One row after another: the weights stream through memory in a single sequential pass, which the
// hardware prefetchers follow best (measured: interleaving 2 or 4 rows to share x loads was slower,
// and x stays in L1 anyway).
void matvec_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot_f32x16(w + r * cols, x, cols);
}

// Four vectors of y at a time accumulate down the rows (one broadcast of x[r], four loads and four
// FMAs per row), then one vector, then a masked tail.
void matvec_transposed_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x,
                                  float* y) noexcept {
  std::size_t c = 0;
  for (; c + 4 * kLanes512 <= cols; c += 4 * kLanes512) {
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    for (std::size_t r = 0; r < rows; ++r) {
      const __m512 xr = _mm512_set1_ps(x[r]);
      const float* row = w + r * cols + c;
      for (std::size_t k = 0; k < 4; ++k) acc[k] = _mm512_fmadd_ps(xr, _mm512_loadu_ps(row + k * kLanes512), acc[k]);
    }
    for (std::size_t k = 0; k < 4; ++k) _mm512_storeu_ps(y + c + k * kLanes512, acc[k]);
  }
  for (; c < cols; c += kLanes512) {
    const std::size_t n = cols - c < kLanes512 ? cols - c : kLanes512;
    const __mmask16 mask = tail_mask16(n);
    __m512 acc = _mm512_setzero_ps();
    for (std::size_t r = 0; r < rows; ++r) {
      acc = _mm512_fmadd_ps(_mm512_set1_ps(x[r]), _mm512_maskz_loadu_ps(mask, w + r * cols + c), acc);
    }
    _mm512_mask_storeu_ps(y + c, mask, acc);
  }
}

}  // namespace brick::ops::kernels
