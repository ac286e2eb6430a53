#pragma once
// The reference Q6_K·Q8_K dot product, in both layouts: every quant unpacked one at a time, integer
// sums exact, the float scale applied once per super-block and accumulated in double. Slow on
// purpose: this is what every other backend is tested against. Included only by the scalar
// (baseline) kernel files; where each layout keeps its quants is q6k_quants.hpp.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_layout.hpp"
#include "quant/q6k_quants.hpp"

namespace brick::quant::kernels {

// Interleaved blocks come with interleaved activations (interleave_q8k).
template <class Block, class Activation>
float dot_q6k_reference(const Block* w, const Activation* x, std::size_t blocks) noexcept {
  constexpr bool kInterleaved = std::is_same_v<Block, BlockQ6KInterleaved>;
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t scaled = 0;  // sum over the 16 sub-blocks of scale * (q6 . q8)
    for (std::size_t j = 0; j < 16; ++j) {
      std::int32_t dot = 0;
      for (std::size_t v = 16 * j; v < 16 * (j + 1); ++v) {
        const std::size_t at = kInterleaved ? interleaved_position(v) : v;
        dot += (detail::q6k_quant(w[b], at) - 32) * x[b].qs[at];
      }
      scaled += w[b].scales[j] * dot;
    }
    sum += static_cast<double>(fp16_to_fp32(w[b].d)) * static_cast<double>(x[b].d) * scaled;
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
