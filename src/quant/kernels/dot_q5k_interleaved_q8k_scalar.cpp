// The reference Q5_K·Q8_K dot product in the sub-block interleaved layout (see
// dot_scale_min_scalar.hpp).
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_scale_min_scalar.hpp"

namespace brick::quant::kernels {

float dot_q5k_interleaved_q8k_scalar(const BlockQ5KInterleaved* w, const BlockQ8KInterleaved* x,
                                     std::size_t blocks) noexcept {
  return dot_scale_min_reference(w, x, blocks);
}

}  // namespace brick::quant::kernels
