#pragma once
// bfloat16 (the top half of an IEEE binary32) <-> binary32 the way ggml converts: round to nearest
// even, and a NaN keeps its sign and top payload bits with the quiet bit set (ggml's
// ggml_compute_fp32_to_bf16). Subnormals are rounded like any other value, never flushed.
#include <bit>
#include <cstdint>
#include <span>

#include "brick/core/backend.hpp"

namespace brick::quant {

// bfloat16 bits, as stored in GGUF files.
using bf16_t = std::uint16_t;

constexpr float bf16_to_fp32(bf16_t h) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

constexpr bf16_t fp32_to_bf16(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<bf16_t>((bits >> 16) | 0x40u);
  return static_cast<bf16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

// Whole rows, the same bits on every backend (what ggml_quantize_chunk writes for BF16 tensors,
// and what ggml-cpu converts x into for BF16 weights). The spans must have the same size (else
// InvalidArgument).
void fp32_to_bf16_row(std::span<const float> in, std::span<bf16_t> out, Backend backend = Backend::Auto);
void bf16_to_fp32_row(std::span<const bf16_t> in, std::span<float> out);

// Dot product of two BF16 rows of the same length (else InvalidArgument), accumulated in float by
// every backend but Scalar (double). The AVX-512 BF16 kernel (vdpbf16ps) treats subnormal inputs
// and results as zero, as llama.cpp's own BF16 dot does on such CPUs.
float dot_bf16_bf16(std::span<const bf16_t> w, std::span<const bf16_t> x, Backend backend = Backend::Auto);

}  // namespace brick::quant
