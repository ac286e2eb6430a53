// Q8_0·Q8_0 in groups of 16 blocks (WeightLayout::GroupedBlocks) with AVX2 + AVX-VNNI
// (dot_q8_0_avxvnni_impl.hpp): the plain AVX-VNNI kernels' bits. Rows run row after row: from DRAM
// at 2 threads on Zen 5 that read 50-96% of the probe where four rows in lockstep read 32-46%
// (bench/RESULTS.md), though lockstep is faster on rows in L2.
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q8_0_avxvnni_impl.hpp"

namespace brick::quant::kernels {

float dot_q8_0_grouped_q8_0_avxvnni(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t groups) noexcept {
  return dot_row(Q80DotVnni{}, w, x, groups);
}

void gemm_q8_0_grouped_q8_0_avxvnni(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                    std::size_t tokens, std::size_t groups, float* out,
                                    std::size_t out_stride) noexcept {
  gemm_vnni(w, rows, x, tokens, groups * BlockQ80Group::kBlocks, out, out_stride);
}

}  // namespace brick::quant::kernels
