// The reference BF16·BF16 dot product: products of two BF16 values are exact in double and so is their
// sum to a few ulps. Slow on purpose: this is what every other backend is tested against.
#include "brick/quant/bf16.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {

float dot_bf16_bf16_scalar(const bf16_t* w, const bf16_t* x, std::size_t n) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_fp32(w[i])) * bf16_to_fp32(x[i]);
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
