// The reference Q6_K·Q8_K dot product in the sub-block interleaved layout (see dot_q6k_scalar.hpp).
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_q6k_scalar.hpp"

namespace brick::quant::kernels {

float dot_q6k_interleaved_q8k_scalar(const BlockQ6KInterleaved* w, const BlockQ8KInterleaved* x,
                                     std::size_t blocks) noexcept {
  return dot_q6k_reference(w, x, blocks);
}

}  // namespace brick::quant::kernels
