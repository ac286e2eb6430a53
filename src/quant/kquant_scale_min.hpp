#pragma once
// The super-block layout Q4_K and Q5_K share: 8 sub-blocks of 32 values, each x ~= d * scale_j * q
// - dmin * min_j with 6-bit scale_j and min_j packed into 12 bytes, and the fit that chooses them
// (ggml's make_qkx2_quants and the scale packing of quantize_row_q4_K_ref / quantize_row_q5_K_ref).
// The two formats differ only in the width of q and in how its bits are stored.
#include <cstdint>

#include "brick/quant/kquants.hpp"

namespace brick::quant::detail {

// How a format fits each sub-block: quants 0..max_quant, and the steps + 1 candidate inverse scales
// (rmin + rdelta * step + max_quant) / (max - min) tried after the first guess.
struct ScaleMinFit {
  int max_quant;
  float rmin;
  float rdelta;
  int steps;
};

inline constexpr ScaleMinFit kQ4KFit{15, -1.0f, 0.1f, 20};
inline constexpr ScaleMinFit kQ5KFit{31, -0.5f, 0.1f, 15};

inline constexpr int kScaleMinSubBlock = 32;
inline constexpr int kScaleMinSubBlocks = static_cast<int>(kBlockSize) / kScaleMinSubBlock;

// The super-block scales of a quantized block, and its quants L[i] in 0..max_quant.
struct ScaleMinBlock {
  fp16_t d = 0;
  fp16_t dmin = 0;
  std::uint8_t scales[12] = {};
  std::uint8_t L[kBlockSize] = {};
};

// Fits the 256 values of x: each sub-block's scale and min, both quantized to 6 bits against the
// fp16 super-block scales, then the quants requantized against the scales as stored.
ScaleMinBlock quantize_scale_min(const float* x, const ScaleMinFit& fit);

struct ScaleMin {
  std::uint8_t scale;
  std::uint8_t min;
};

// Sub-block j's 6-bit scale and min: the first four live in the low 6 bits of bytes 0-3 / 4-7, the
// last four are split into a low nibble in bytes 8-11 and two high bits on top of bytes 0-7.
constexpr ScaleMin unpack_scale_min(const std::uint8_t* packed, int j) noexcept {
  if (j < 4) return {static_cast<std::uint8_t>(packed[j] & 63), static_cast<std::uint8_t>(packed[j + 4] & 63)};
  return {static_cast<std::uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4)),
          static_cast<std::uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4))};
}

// Stores sub-block j's 6-bit scale and min where unpack_scale_min() reads them; called for j = 0..7
// in order (sub-blocks 4-7 add their top bits to bytes the first four wrote).
constexpr void pack_scale_min(std::uint8_t* packed, int j, ScaleMin sm) noexcept {
  if (j < 4) {
    packed[j] = sm.scale;
    packed[j + 4] = sm.min;
  } else {
    packed[j + 4] = static_cast<std::uint8_t>((sm.scale & 0xF) | ((sm.min & 0xF) << 4));
    packed[j - 4] |= static_cast<std::uint8_t>((sm.scale >> 4) << 6);
    packed[j] |= static_cast<std::uint8_t>((sm.min >> 4) << 6);
  }
}

// The float scales and mins of sub-blocks j and j + 1 (j even), as ggml's dequantizers compute them:
// d * scale and dmin * min, each rounded once.
struct SubBlockPair {
  float d1, m1, d2, m2;
};
SubBlockPair sub_block_pair(fp16_t d, fp16_t dmin, const std::uint8_t* packed, int j);

}  // namespace brick::quant::detail
