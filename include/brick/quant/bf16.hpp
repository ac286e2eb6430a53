#pragma once
// bfloat16 (the top half of an IEEE binary32) <-> binary32 the way ggml converts: round to nearest
// even, and a NaN keeps its sign and top payload bits with the quiet bit set (ggml's
// ggml_compute_fp32_to_bf16). Subnormals are rounded like any other value, never flushed.
#include <bit>
#include <cstdint>

namespace brick::quant {

// bfloat16 bits, as stored in GGUF files.
using bf16_t = std::uint16_t;

constexpr float bf16_to_fp32(bf16_t h) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

constexpr bf16_t fp32_to_bf16(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<bf16_t>((bits >> 16) | 0x40u);
  return static_cast<bf16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace brick::quant
