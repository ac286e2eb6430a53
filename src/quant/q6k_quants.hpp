#pragma once
// Where a Q6_K block keeps its 6-bit quants, in both layouts (brick/quant/weight_layout.hpp): one
// decoder per layout, shared by the scalar reference kernels and the repacking between layouts.
#include <cstddef>
#include <cstdint>

#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_layout.hpp"

namespace brick::quant::detail {

// The unsigned quant (0..63) at position `at` (0..255) of a plain block: each half of 128
// positions uses 64 bytes of ql and 32 of qh; within a half, quarter k (32 positions) takes the low
// nibbles of ql[0..31] (k = 0), of ql[32..63] (k = 1), then the high nibbles (k = 2, 3), and bits
// 2k..2k+1 of qh[0..31] as its top two bits.
inline std::uint8_t q6k_quant(const BlockQ6K& block, std::size_t at) noexcept {
  const std::size_t half = at / 128;
  const std::size_t quarter = (at % 128) / 32;
  const std::size_t lane = at % 32;
  const std::uint8_t packed = block.ql[64 * half + 32 * (quarter % 2) + lane];
  const int low = quarter < 2 ? (packed & 0xF) : (packed >> 4);
  const int high = (block.qh[32 * half + lane] >> (2 * quarter)) & 3;
  return static_cast<std::uint8_t>(low | high << 4);
}

// The same for an interleaved block: each half of 128 positions uses 96 bytes of qs; quarters
// 0..2 take bits 0..5 of their 32 bytes, quarter 3 their bits 6..7 (those of quarter k as its bits
// 4 - 2k .. 5 - 2k).
inline std::uint8_t q6k_quant(const BlockQ6KInterleaved& block, std::size_t at) noexcept {
  const std::uint8_t* packed = block.qs + 96 * (at / 128);
  const std::size_t quarter = (at % 128) / 32;
  const std::size_t lane = at % 32;
  if (quarter < 3) return packed[32 * quarter + lane] & 0x3F;
  int q = 0;
  for (std::size_t k = 0; k < 3; ++k) q |= (packed[32 * k + lane] >> 6) << (4 - 2 * k);
  return static_cast<std::uint8_t>(q);
}

}  // namespace brick::quant::detail
