#pragma once
// The reference Q4_K·Q8_K and Q5_K·Q8_K dot products, which differ only in how a quant is stored:
// every quant unpacked one at a time, integer sums exact, the float scales applied once per
// super-block and accumulated in double. Slow on purpose: this is what every other backend is
// tested against. Included only by the scalar (baseline) kernel files.
#include <cstddef>
#include <cstdint>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kquant_scale_min.hpp"

namespace brick::quant::kernels {

// quant(block, v) is the unsigned quant of value v (0..255) of a block.
template <class Block, class Quant>
float dot_scale_min_reference(const Block* w, const BlockQ8K* x, std::size_t blocks, Quant quant) noexcept {
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t scaled = 0;  // sum over sub-blocks of scale * (q . q8)
    std::int32_t mins = 0;    // sum over sub-blocks of min * (sum of q8)
    for (int j = 0; j < detail::kScaleMinSubBlocks; ++j) {
      const detail::ScaleMin sm = detail::unpack_scale_min(w[b].scales, j);
      std::int32_t dot = 0;
      for (int v = 32 * j; v < 32 * (j + 1); ++v) dot += quant(w[b], v) * x[b].qs[v];
      scaled += sm.scale * dot;
      mins += sm.min * (x[b].bsums[2 * j] + x[b].bsums[2 * j + 1]);
    }
    const double dx = x[b].d;
    sum += static_cast<double>(fp16_to_fp32(w[b].d)) * dx * scaled -
           static_cast<double>(fp16_to_fp32(w[b].dmin)) * dx * mins;
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
