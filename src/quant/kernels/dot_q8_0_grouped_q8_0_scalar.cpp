// The reference Q8_0·Q8_0 dot product on grouped blocks: the plain reference's arithmetic, block by
// block in the same order, so its bits.
#include <cstdint>

#include "brick/quant/fp16.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {

float dot_q8_0_grouped_q8_0_scalar(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t groups) noexcept {
  double sum = 0.0;
  for (std::size_t g = 0; g < groups; ++g) {
    for (std::size_t b = 0; b < BlockQ80Group::kBlocks; ++b) {
      std::int32_t dot = 0;
      for (std::size_t j = 0; j < kQ80BlockSize; ++j) {
        dot += w[g].qs[kQ80BlockSize * b + j] * x[g].qs[kQ80BlockSize * b + j];
      }
      sum += static_cast<double>(fp16_to_fp32(w[g].d[b])) * static_cast<double>(fp16_to_fp32(x[g].d[b])) * dot;
    }
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
