// Q8_0·Q8_0 in groups of 16 blocks (WeightLayout::GroupedBlocks) with AVX-512 F/BW + VNNI
// (dot_q8_0_avx512vnni_impl.hpp): the plain AVX-512 VNNI kernels' bits. A pair of blocks is one
// 64-byte load and a group's 16 d's one 32-byte load and a permute, where plain blocks take two
// loads and an insert, and d's assembled four at a time. The rows walk as four runs side by side,
// as the plain ones do: on Zen 5 rows one after another, the activation side computed once for all
// of them (the AVX-VNNI kernel's walk), ran faster in L2 but read 68-70% of the DRAM probe where
// four runs read 80-84% (bench/RESULTS.md).
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q8_0_avx512vnni_impl.hpp"

namespace brick::quant::kernels {
namespace {

// Q80DotVnni on rows counted in groups.
struct GroupedQ80DotVnni {
  template <std::size_t R>
  void side_by_side(const BlockQ80Group* const (&rows)[R], const BlockQ80Group* x, std::size_t groups,
                    float* const (&out)[R]) const {
    Q80DotVnni{}.side_by_side(rows, x, groups * BlockQ80Group::kBlocks, out);
  }
};

}  // namespace

float dot_q8_0_grouped_q8_0_avx512vnni(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t groups) noexcept {
  return dot_row(GroupedQ80DotVnni{}, w, x, groups);
}

void dot_q8_0_grouped_q8_0_rows_avx512vnni(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                           std::size_t groups, float* out) noexcept {
  dot_rows_in_four_runs(GroupedQ80DotVnni{}, w, rows, x, groups, out);
}

void dot_q8_0_grouped_q8_0_four_runs_avx512vnni(const BlockQ80Group* const (&starts)[4], std::size_t count,
                                                const BlockQ80Group* x, std::size_t groups,
                                                float* const (&out)[4]) noexcept {
  dot_four_runs_side_by_side(GroupedQ80DotVnni{}, starts, count, x, groups, out);
}

void gemm_q8_0_grouped_q8_0_avx512vnni(const BlockQ80Group* w, std::size_t rows, const BlockQ80Group* x,
                                       std::size_t tokens, std::size_t groups, float* out,
                                       std::size_t out_stride) noexcept {
  gemm_vnni(w, rows, x, tokens, groups * BlockQ80Group::kBlocks, out, out_stride);
}

}  // namespace brick::quant::kernels
