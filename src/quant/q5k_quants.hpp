#pragma once
// Where an interleaved Q5_K block keeps its 5-bit quants (brick/quant/weight_layout.hpp): one
// decoder, shared by the scalar reference kernels and the repacking between layouts.
#include <cstddef>
#include <cstdint>

#include "brick/quant/weight_layout.hpp"

namespace brick::quant::detail {

// The unsigned quant (0..31) at position `at` (0..255), byte p of vector k (at = 32k + p): byte p of
// qs[32c ..] (c = k / 2) holds vector 2c's quant in bits 0..4 and bits 2..4 of vector 2c + 1's in
// bits 5..7; byte p of qs[128 ..] holds bits 0..1 of vector 2c + 1's in bits 2c..2c + 1.
inline std::uint8_t q5k_quant(const BlockQ5KInterleaved& block, std::size_t at) noexcept {
  const std::size_t k = at / 32;
  const std::size_t p = at % 32;
  const std::uint8_t packed = block.qs[32 * (k / 2) + p];
  if (k % 2 == 0) return packed & 0x1F;
  const int low_bits = (block.qs[128 + p] >> (k - 1)) & 3;
  return static_cast<std::uint8_t>((packed >> 5) << 2 | low_bits);
}

}  // namespace brick::quant::detail
