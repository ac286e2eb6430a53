// Q6_K: 16 sub-blocks of 16 values, each x ~= d * scale_j * (q - 32) with 6-bit q and a signed
// 8-bit scale_j. Same bytes as ggml's quantize_row_q6_K_ref, same floats as dequantize_row_q6_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kquant_common.hpp"

namespace brick::quant {
namespace {

using detail::nearest_int;

constexpr int kSubBlock = 16;
constexpr int kSubBlocks = static_cast<int>(kBlockSize) / kSubBlock;
constexpr int kHalfRange = 32;      // quants are -32..31, stored with +32
constexpr float kAllZero = 1e-15f;  // ggml's GROUP_MAX_EPS

int clamp_quant(int l) noexcept {
  return std::max(-kHalfRange, std::min(kHalfRange - 1, l));
}

// Symmetric fit x ~= scale * (L - 32) over one sub-block, weighting each value by x^2, trying 18
// inverse scales around -32 / (the value of largest magnitude) and keeping the best weighted
// least-squares one (ggml's make_qx_quants with rmse_type = 1 and no importance weights). The
// scale is negative when that value is positive.
float fit_scale(const float* x, std::int8_t* L) {
  float max = 0;
  float amax = 0;
  for (int i = 0; i < kSubBlock; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kAllZero) {
    std::fill_n(L, kSubBlock, std::int8_t{0});
    return 0.0f;
  }
  float iscale = -kHalfRange / max;
  float sumlx = 0;
  float suml2 = 0;
  for (int i = 0; i < kSubBlock; ++i) {
    const int l = clamp_quant(nearest_int(iscale * x[i]));
    L[i] = static_cast<std::int8_t>(l + kHalfRange);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int step = -9; step <= 9; ++step) {
    if (step == 0) continue;
    iscale = -(kHalfRange + 0.1f * step) / max;
    sumlx = 0;
    suml2 = 0;
    for (int i = 0; i < kSubBlock; ++i) {
      const int l = clamp_quant(nearest_int(iscale * x[i]));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < kSubBlock; ++i) {
        L[i] = static_cast<std::int8_t>(kHalfRange + clamp_quant(nearest_int(iscale * x[i])));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

void quantize_block(const float* x, BlockQ6K& block) {
  std::int8_t L[kBlockSize];
  float scales[kSubBlocks];

  float max_scale = 0;
  float max_abs_scale = 0;
  for (int j = 0; j < kSubBlocks; ++j) {
    scales[j] = fit_scale(x + kSubBlock * j, L + kSubBlock * j);
    const float abs_scale = std::fabs(scales[j]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[j];
    }
  }
  if (max_abs_scale < kAllZero) {
    std::memset(&block, 0, sizeof(block));
    return;
  }

  // The sub-block scales as signed 8-bit multiples of d; the largest maps to -128 (127 at most).
  const float iscale = -128.f / max_scale;
  block.d = fp32_to_fp16(1 / iscale);
  for (int j = 0; j < kSubBlocks; ++j) {
    block.scales[j] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * scales[j])));
  }

  // Requantize against the scales as stored. A sub-block whose stored scale is zero keeps the
  // quants of its fit.
  for (int j = 0; j < kSubBlocks; ++j) {
    const float d = fp16_to_fp32(block.d) * block.scales[j];
    if (d == 0.0f) continue;
    for (int i = 0; i < kSubBlock; ++i) {
      const int l = clamp_quant(nearest_int(x[kSubBlock * j + i] / d));
      L[kSubBlock * j + i] = static_cast<std::int8_t>(l + kHalfRange);
    }
  }

  // Each 128-value half: ql holds the low nibbles of values l and l+64 (bytes 0..31) and of l+32
  // and l+96 (bytes 32..63); qh holds the top two bits of l, l+32, l+64, l+96 in bit pairs.
  std::uint8_t* ql = block.ql;
  std::uint8_t* qh = block.qh;
  for (int n = 0; n < static_cast<int>(kBlockSize); n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int q1 = L[n + l];
      const int q2 = L[n + l + 32];
      const int q3 = L[n + l + 64];
      const int q4 = L[n + l + 96];
      ql[l] = static_cast<std::uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
      ql[l + 32] = static_cast<std::uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
      qh[l] = static_cast<std::uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) |
                                        ((q4 >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
}

void dequantize_block(const BlockQ6K& block, float* y) {
  const float d = fp16_to_fp32(block.d);
  const std::uint8_t* ql = block.ql;
  const std::uint8_t* qh = block.qh;
  const std::int8_t* sc = block.scales;
  for (int n = 0; n < static_cast<int>(kBlockSize); n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - kHalfRange;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - kHalfRange;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - kHalfRange;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - kHalfRange;
      y[l] = d * sc[is] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

}  // namespace

void quantize_q6k(std::span<const float> x, std::span<BlockQ6K> out) {
  detail::quantize_blocks("quantize_q6k", x, out, quantize_block);
}

void dequantize_q6k(std::span<const BlockQ6K> in, std::span<float> out) {
  detail::dequantize_blocks("dequantize_q6k", in, out, dequantize_block);
}

}  // namespace brick::quant
