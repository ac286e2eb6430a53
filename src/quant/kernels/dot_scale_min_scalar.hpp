#pragma once
// The reference Q4_K·Q8_K and Q5_K·Q8_K dot products, in both layouts: every quant unpacked one at
// a time, integer sums exact, the float scales applied once per super-block and accumulated in
// double. Slow on purpose: this is what every other backend is tested against. Included only by
// the scalar (baseline) kernel files.
#include <cstddef>
#include <cstdint>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_layout.hpp"
#include "quant/kquant_scale_min.hpp"
#include "quant/q5k_quants.hpp"

namespace brick::quant::kernels {

// The unsigned quant at position `at` (0..255) of a block; the plain layout's position of value v
// is v, the interleaved layout's interleaved_position(v). Both Q4_K layouts and plain Q5_K store
// position `at` in the low (at % 64 < 32) or high nibble of qs[32 * (at / 64) + at % 32], with
// Q5_K's fifth bit in bit at / 32 of qh[at % 32]; interleaved Q5_K as q5k_quants.hpp says.
template <class Block>
std::int32_t quant_at(const Block& block, std::size_t at) noexcept {
  const std::uint8_t packed = block.qs[32 * (at / 64) + at % 32];
  std::int32_t quant = at % 64 < 32 ? (packed & 0xF) : (packed >> 4);
  if constexpr (requires { block.qh; }) quant |= ((block.qh[at % 32] >> (at / 32)) & 1) << 4;
  return quant;
}

inline std::int32_t quant_at(const BlockQ5KInterleaved& block, std::size_t at) noexcept {
  return detail::q5k_quant(block, at);
}

// Interleaved blocks come with interleaved activations (interleave_q8k).
template <class Block, class Activation>
float dot_scale_min_reference(const Block* w, const Activation* x, std::size_t blocks) noexcept {
  constexpr bool kInterleaved = requires { w->mins; };
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t scaled = 0;  // sum over sub-blocks of scale * (q . q8)
    std::int32_t mins = 0;    // sum over sub-blocks of min * (sum of q8)
    for (int j = 0; j < detail::kScaleMinSubBlocks; ++j) {
      detail::ScaleMin sm;
      if constexpr (kInterleaved) {
        sm = {w[b].scales[j], w[b].mins[j]};
      } else {
        sm = detail::unpack_scale_min(w[b].scales, j);
      }
      std::int32_t dot = 0;
      for (std::size_t v = 32 * static_cast<std::size_t>(j); v < 32 * static_cast<std::size_t>(j + 1); ++v) {
        const std::size_t at = kInterleaved ? interleaved_position(v) : v;
        dot += quant_at(w[b], at) * x[b].qs[at];
      }
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
