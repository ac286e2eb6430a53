// Q8_0·Q8_0 with AVX-512 F/BW + VNNI (dot_q8_0_avx512vnni_impl.hpp): the rows walked as four runs
// side by side, each group's activation side computed once for the four.
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q8_0_avx512vnni_impl.hpp"

namespace brick::quant::kernels {

float dot_q8_0_q8_0_avx512vnni(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  return dot_row(Q80DotVnni{}, w, x, blocks);
}

void dot_q8_0_q8_0_rows_avx512vnni(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t blocks,
                                   float* out) noexcept {
  dot_rows_in_four_runs(Q80DotVnni{}, w, rows, x, blocks, out);
}

void dot_q8_0_q8_0_four_runs_avx512vnni(const BlockQ80* const (&starts)[4], std::size_t count, const BlockQ80* x,
                                        std::size_t blocks, float* const (&out)[4]) noexcept {
  dot_four_runs_side_by_side(Q80DotVnni{}, starts, count, x, blocks, out);
}

void gemm_q8_0_q8_0_avx512vnni(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t tokens,
                               std::size_t blocks, float* out, std::size_t out_stride) noexcept {
  gemm_vnni(w, rows, x, tokens, blocks, out, out_stride);
}

}  // namespace brick::quant::kernels
