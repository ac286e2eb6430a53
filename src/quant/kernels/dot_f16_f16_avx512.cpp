// F16·F16 with AVX-512 F; the kernel itself is in dot_half_avx512_impl.hpp.
#include "quant/kernels/dot_half_avx512_impl.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {

float dot_f16_f16_avx512(const fp16_t* w, const fp16_t* x, std::size_t n) noexcept { return dot_row(F16Dot{}, w, x, n); }

void dot_f16_f16_rows_avx512(const fp16_t* w, std::size_t rows, const fp16_t* x, std::size_t n, float* out) noexcept {
  dot_rows_in_four_runs(F16Dot{}, w, rows, x, n, out);
}

void dot_f16_f16_four_runs_avx512(const fp16_t* const (&starts)[4], std::size_t count, const fp16_t* x, std::size_t n,
                                  float* const (&out)[4]) noexcept {
  dot_four_runs_side_by_side(F16Dot{}, starts, count, x, n, out);
}

}  // namespace brick::quant::kernels
