// Q8_0·Q8_0 with AVX2 on plain blocks (dot_q8_0_avx2_impl.hpp).
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q8_0_avx2_impl.hpp"

namespace brick::quant::kernels {

float dot_q8_0_q8_0_avx2(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  return dot_row(w, x, blocks);
}

void dot_q8_0_q8_0_rows_avx2(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t blocks,
                             float* out) noexcept {
  dot_rows(w, rows, x, blocks, out);
}

void gemm_q8_0_q8_0_avx2(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t tokens,
                         std::size_t blocks, float* out, std::size_t out_stride) noexcept {
  gemm(w, rows, x, tokens, blocks, out, out_stride);
}

}  // namespace brick::quant::kernels
