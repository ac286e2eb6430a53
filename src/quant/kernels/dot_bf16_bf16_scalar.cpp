// The reference BF16·BF16 dot product (see dot_halves_scalar.hpp).
#include "brick/quant/bf16.hpp"
#include "quant/kernels/dot_halves_scalar.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {

float dot_bf16_bf16_scalar(const bf16_t* w, const bf16_t* x, std::size_t n) noexcept {
  return dot_halves_reference<bf16_to_fp32>(w, x, n);
}

}  // namespace brick::quant::kernels
