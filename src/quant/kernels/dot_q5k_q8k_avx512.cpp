// Q5_K·Q8_K with AVX-512 F/BW; the kernel itself is in dot_kquant_avx512_impl.hpp.
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_kquant_avx512_impl.hpp"

namespace brick::quant::kernels {

float dot_q5k_q8k_avx512(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  return dot_one_row(Q5KDot<Avx512Level::Bw>{}, w, x, blocks);
}

void dot_q5k_q8k_rows_avx512(const BlockQ5K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                             float* out) noexcept {
  dot_rows_by_walk(Q5KDot<Avx512Level::Bw>{}, w, rows, x, blocks, out);
}

void dot_q5k_q8k_four_runs_avx512(const BlockQ5K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                  std::size_t blocks, float* const (&out)[4]) noexcept {
  dot_four_runs(Q5KDot<Avx512Level::Bw>{}, starts, count, x, blocks, out);
}

void gemm_q5k_q8k_avx512(const BlockQ5K* w, std::size_t rows, const BlockQ8K* x, std::size_t tokens, std::size_t blocks,
                       float* out, std::size_t out_stride) noexcept {
  dot_tokens(Q5KDot<Avx512Level::Bw>{}, w, rows, x, tokens, blocks, out, out_stride);
}

}  // namespace brick::quant::kernels
