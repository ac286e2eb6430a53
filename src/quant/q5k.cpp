// Q5_K: 8 sub-blocks of 32 values, each x ~= d*scale_j * q - dmin*min_j with 5-bit q and 6-bit
// scale_j / min_j. Same bytes as ggml's quantize_row_q5_K_ref, same floats as dequantize_row_q5_K.
#include <cstring>

#include "brick/quant/kquants.hpp"
#include "quant/kquant_common.hpp"
#include "quant/kquant_scale_min.hpp"

namespace brick::quant {
namespace {

using detail::kScaleMinSubBlocks;

void quantize_block(const float* x, BlockQ5K& block) {
  const detail::ScaleMinBlock fitted = detail::quantize_scale_min(x, detail::kQ5KFit);
  block.d = fitted.d;
  block.dmin = fitted.dmin;
  std::memcpy(block.scales, fitted.scales, sizeof(block.scales));

  // Low 4 bits: two sub-blocks per 32 bytes (low nibble, high nibble). 5th bit: bit 2k / 2k+1 of
  // qh[i] for sub-blocks 2k / 2k+1.
  std::memset(block.qh, 0, sizeof(block.qh));
  std::uint8_t* ql = block.qs;
  std::uint8_t high_bit_lo = 1;
  std::uint8_t high_bit_hi = 2;
  for (int n = 0; n < static_cast<int>(kBlockSize); n += 64) {
    for (int i = 0; i < 32; ++i) {
      int l1 = fitted.L[n + i];
      if (l1 > 15) {
        l1 -= 16;
        block.qh[i] |= high_bit_lo;
      }
      int l2 = fitted.L[n + i + 32];
      if (l2 > 15) {
        l2 -= 16;
        block.qh[i] |= high_bit_hi;
      }
      ql[i] = static_cast<std::uint8_t>(l1 | (l2 << 4));
    }
    high_bit_lo = static_cast<std::uint8_t>(high_bit_lo << 2);
    high_bit_hi = static_cast<std::uint8_t>(high_bit_hi << 2);
    ql += 32;
  }
}

void dequantize_block(const BlockQ5K& block, float* y) {
  const std::uint8_t* ql = block.qs;
  std::uint8_t high_bit_lo = 1;
  std::uint8_t high_bit_hi = 2;
  for (int j = 0; j < kScaleMinSubBlocks; j += 2) {
    const detail::SubBlockPair s = detail::sub_block_pair(block.d, block.dmin, block.scales, j);
    for (int l = 0; l < 32; ++l) {
      *y++ = s.d1 * ((ql[l] & 0xF) + ((block.qh[l] & high_bit_lo) ? 16 : 0)) - s.m1;
    }
    for (int l = 0; l < 32; ++l) {
      *y++ = s.d2 * ((ql[l] >> 4) + ((block.qh[l] & high_bit_hi) ? 16 : 0)) - s.m2;
    }
    ql += 32;
    high_bit_lo = static_cast<std::uint8_t>(high_bit_lo << 2);
    high_bit_hi = static_cast<std::uint8_t>(high_bit_hi << 2);
  }
}

}  // namespace

void quantize_q5k(std::span<const float> x, std::span<BlockQ5K> out) {
  detail::quantize_blocks("quantize_q5k", x, out, quantize_block);
}

void dequantize_q5k(std::span<const BlockQ5K> in, std::span<float> out) {
  detail::dequantize_blocks("dequantize_q5k", in, out, dequantize_block);
}

}  // namespace brick::quant
