#pragma once
// The reference Q6_K·Q8_K dot product, in both layouts: every quant unpacked one at a time, integer
// sums exact, the float scale applied once per super-block and accumulated in double. Slow on
// purpose: this is what every other backend is tested against. Included only by the scalar
// (baseline) kernel files.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_layout.hpp"

namespace brick::quant::kernels {

// The signed 6-bit quant at position `at` (0..255) of a block. The plain layout's position of
// value v is v, the interleaved layout's interleaved_position(v).
//
// Plain: each half of 128 positions uses 64 bytes of ql and 32 of qh; within a half, quarter k (32
// positions) takes the low nibbles of ql[0..31] (k=0), of ql[32..63] (k=1), then the high nibbles
// (k=2, 3), and bits 2k..2k+1 of qh[0..31] as its top two bits.
inline std::int32_t q6k_quant_at(const BlockQ6K& block, std::size_t at) noexcept {
  const std::size_t half = at / 128;
  const std::size_t quarter = (at % 128) / 32;
  const std::size_t lane = at % 32;
  const std::uint8_t packed = block.ql[64 * half + 32 * (quarter % 2) + lane];
  const int low = quarter < 2 ? (packed & 0xF) : (packed >> 4);
  const int high = (block.qh[32 * half + lane] >> (2 * quarter)) & 3;
  return (low | (high << 4)) - 32;
}

// Interleaved: each half of 128 positions uses 96 bytes of qs; quarters 0..2 take bits 0..5 of
// their 32 bytes, quarter 3 their bits 6..7 (those of quarter k as its bits 4 - 2k .. 5 - 2k).
inline std::int32_t q6k_quant_at(const BlockQ6KInterleaved& block, std::size_t at) noexcept {
  const std::uint8_t* packed = block.qs + 96 * (at / 128);
  const std::size_t quarter = (at % 128) / 32;
  const std::size_t lane = at % 32;
  if (quarter < 3) return (packed[32 * quarter + lane] & 0x3F) - 32;
  std::int32_t q = 0;
  for (std::size_t k = 0; k < 3; ++k) q |= (packed[32 * k + lane] >> 6) << (4 - 2 * k);
  return q - 32;
}

// Interleaved blocks come with interleaved activations (interleave_q8k).
template <class Block>
float dot_q6k_reference(const Block* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  constexpr bool kInterleaved = std::is_same_v<Block, BlockQ6KInterleaved>;
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t scaled = 0;  // sum over the 16 sub-blocks of scale * (q6 . q8)
    for (std::size_t j = 0; j < 16; ++j) {
      std::int32_t dot = 0;
      for (std::size_t v = 16 * j; v < 16 * (j + 1); ++v) {
        const std::size_t at = kInterleaved ? interleaved_position(v) : v;
        dot += q6k_quant_at(w[b], at) * x[b].qs[at];
      }
      scaled += w[b].scales[j] * dot;
    }
    sum += static_cast<double>(fp16_to_fp32(w[b].d)) * static_cast<double>(x[b].d) * scaled;
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
