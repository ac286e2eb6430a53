// Q8_0·Q8_0 in groups of 16 blocks (WeightLayout::GroupedBlocks), with the AVX2 kernels
// (dot_q8_0_avx2_impl.hpp) built for this file's instruction set: the plain AVX2 kernels' bits.
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q8_0_avx2_impl.hpp"

namespace brick::quant::kernels {

float dot_q8_0_grouped_q8_0_avx512(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t groups) noexcept {
  return dot_row(w, x, groups * BlockQ80Group::kBlocks);
}

void dot_q8_0_grouped_q8_0_rows_avx512(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                     std::size_t groups, float* out) noexcept {
  dot_rows(w, rows, x, groups * BlockQ80Group::kBlocks, out);
}

void gemm_q8_0_grouped_q8_0_avx512(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                 std::size_t tokens, std::size_t groups, float* out, std::size_t out_stride) noexcept {
  gemm(w, rows, x, tokens, groups * BlockQ80Group::kBlocks, out, out_stride);
}

}  // namespace brick::quant::kernels
