// Q5_K·Q8_K with AVX2; the kernel itself is in dot_scale_min_avx2_impl.hpp.
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_scale_min_avx2_impl.hpp"

namespace brick::quant::kernels {

float dot_q5k_q8k_avx2(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  return dot_scale_min_q8k(w, x, blocks);
}

}  // namespace brick::quant::kernels
