// Q4_K: 8 sub-blocks of 32 values, each x ~= d*scale_j * q - dmin*min_j with 4-bit q and 6-bit
// scale_j / min_j. Same bytes as ggml's quantize_row_q4_K_ref, same floats as dequantize_row_q4_K.
#include <cstring>

#include "brick/quant/kquants.hpp"
#include "quant/kquant_common.hpp"
#include "quant/kquant_scale_min.hpp"

namespace brick::quant {
namespace {

using detail::kScaleMinSubBlocks;

void quantize_block(const float* x, BlockQ4K& block) {
  const detail::ScaleMinBlock fitted = detail::quantize_scale_min(x, detail::kQ4KFit);
  block.d = fitted.d;
  block.dmin = fitted.dmin;
  std::memcpy(block.scales, fitted.scales, sizeof(block.scales));
  // Two sub-blocks per 32 bytes: the first in the low nibbles, the second in the high ones.
  for (std::size_t n = 0; n < kBlockSize; n += 64) {
    for (std::size_t i = 0; i < 32; ++i) {
      block.qs[n / 2 + i] = static_cast<std::uint8_t>(fitted.L[n + i] | (fitted.L[n + i + 32] << 4));
    }
  }
}

void dequantize_block(const BlockQ4K& block, float* y) {
  const std::uint8_t* q = block.qs;
  for (int j = 0; j < kScaleMinSubBlocks; j += 2) {
    const detail::SubBlockPair s = detail::sub_block_pair(block.d, block.dmin, block.scales, j);
    for (int l = 0; l < 32; ++l) *y++ = s.d1 * (q[l] & 0xF) - s.m1;
    for (int l = 0; l < 32; ++l) *y++ = s.d2 * (q[l] >> 4) - s.m2;
    q += 32;
  }
}

}  // namespace

void quantize_q4k(std::span<const float> x, std::span<BlockQ4K> out) {
  detail::quantize_blocks("quantize_q4k", x, out, quantize_block);
}

void dequantize_q4k(std::span<const BlockQ4K> in, std::span<float> out) {
  detail::dequantize_blocks("dequantize_q4k", in, out, dequantize_block);
}

}  // namespace brick::quant
