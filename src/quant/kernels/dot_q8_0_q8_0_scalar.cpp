// The reference Q8_0·Q8_0 dot product: integer block sums exact, the two fp16 scales applied once
// per block and accumulated in double. Slow on purpose: this is what every other backend is tested
// against.
#include <cstdint>

#include "brick/quant/fp16.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {

float dot_q8_0_q8_0_scalar(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t dot = 0;
    for (std::size_t j = 0; j < kQ80BlockSize; ++j) dot += w[b].qs[j] * x[b].qs[j];
    sum += static_cast<double>(fp16_to_fp32(w[b].d)) * static_cast<double>(fp16_to_fp32(x[b].d)) * dot;
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
