// Q8_0·Q8_0 in groups of 16 blocks (WeightLayout::GroupedBlocks) with AVX2 + AVX-VNNI
// (dot_q8_0_avxvnni_impl.hpp): the plain AVX-VNNI kernels' bits. The rows kernel walks the rows
// one after another with the activation side computed once for all of them: on Zen 5 its rows in
// L2 took 4.8 ns per 256 values where four rows in lockstep took 5.8 and one row at a time, each
// computing it, 6.4; four rows in lockstep also read less of the DRAM probe at 2 threads.
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q8_0_avxvnni_impl.hpp"

namespace brick::quant::kernels {

float dot_q8_0_grouped_q8_0_avxvnni(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t groups) noexcept {
  return dot_row(Q80DotVnni{}, w, x, groups);
}

void dot_q8_0_grouped_q8_0_rows_avxvnni(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                        std::size_t groups, float* out) noexcept {
  grouped_rows_sharing_activation(w, rows, x, groups, out);
}

void gemm_q8_0_grouped_q8_0_avxvnni(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                    std::size_t tokens, std::size_t groups, float* out,
                                    std::size_t out_stride) noexcept {
  gemm_vnni(w, rows, x, tokens, groups * BlockQ80Group::kBlocks, out, out_stride);
}

}  // namespace brick::quant::kernels
