// The reference F16·F16 dot product (see dot_halves_scalar.hpp).
#include "brick/quant/fp16.hpp"
#include "quant/kernels/dot_halves_scalar.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {

float dot_f16_f16_scalar(const fp16_t* w, const fp16_t* x, std::size_t n) noexcept {
  return dot_halves_reference<fp16_to_fp32>(w, x, n);
}

}  // namespace brick::quant::kernels
