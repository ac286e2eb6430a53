// Q4_K·Q8_K with AVX2 and AVX-VNNI; the kernels are in dot_scale_min_avx2_impl.hpp, the GEMM
// summing with vpdpbusd (the same integers as the AVX2 one).
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_scale_min_avx2_impl.hpp"

namespace brick::quant::kernels {

float dot_q4k_q8k_avxvnni(const BlockQ4K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  return dot_scale_min_q8k(w, x, blocks);
}

void dot_q4k_q8k_four_runs_avxvnni(const BlockQ4K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                   std::size_t blocks, float* const (&out)[4]) noexcept {
  four_runs_scale_min_q8k(starts, count, x, blocks, out);
}

void gemm_q4k_q8k_avxvnni(const BlockQ4K* w, std::size_t rows, const BlockQ8K* x, std::size_t tokens, std::size_t blocks,
                          float* out, std::size_t out_stride) noexcept {
  gemm_scale_min_q8k(w, rows, x, tokens, blocks, out, out_stride);
}

}  // namespace brick::quant::kernels
