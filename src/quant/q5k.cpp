// Q5_K: 8 sub-blocks of 32 values, each x ~= d*scale_j * q - dmin*min_j with 5-bit q and 6-bit
// scale_j / min_j. Same bytes as ggml's quantize_row_q5_K_ref, same floats as dequantize_row_q5_K.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kquant_common.hpp"

namespace brick::quant {
namespace {

using detail::nearest_int;

constexpr int kSubBlock = 32;
constexpr int kSubBlocks = static_cast<int>(kBlockSize) / kSubBlock;
constexpr int kMaxQuant = 31;
constexpr int kMaxScale = 63;  // 6-bit sub-block scales and mins

// Fits x ~= scale * L + min (min <= 0) over one sub-block by weighted least squares, trying 16
// candidate inverse scales around nmax / (max - min). Returns the scale and stores -min in
// *negated_min (ggml's make_qkx2_quants with rmin = -0.5, rdelta = 0.1, nstep = 15, squared error).
float fit_scale_and_min(const float* x, const float* weights, std::uint8_t* L, float* negated_min) {
  constexpr float kRmin = -0.5f;
  constexpr float kRdelta = 0.1f;
  constexpr int kSteps = 15;

  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < kSubBlock; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill_n(L, kSubBlock, std::uint8_t{0});
    *negated_min = -min;
    return 0.0f;
  }
  float iscale = kMaxQuant / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < kSubBlock; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<std::uint8_t>(std::max(0, std::min(kMaxQuant, l)));
    float diff = scale * L[i] + min - x[i];
    diff = diff * diff;
    best_error += weights[i] * diff;
  }
  std::uint8_t candidate[kSubBlock];
  for (int step = 0; step <= kSteps; ++step) {
    iscale = (kRmin + kRdelta * step + kMaxQuant) / (max - min);
    float sum_l = 0;
    float sum_l2 = 0;
    float sum_xl = 0;
    for (int i = 0; i < kSubBlock; ++i) {
      int l = nearest_int(iscale * (x[i] - min));
      l = std::max(0, std::min(kMaxQuant, l));
      candidate[i] = static_cast<std::uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float error = 0;
      for (int i = 0; i < kSubBlock; ++i) {
        float diff = this_scale * candidate[i] + this_min - x[i];
        diff = diff * diff;
        error += weights[i] * diff;
      }
      if (error < best_error) {
        std::copy_n(candidate, kSubBlock, L);
        best_error = error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *negated_min = -min;
  return scale;
}

// The 6-bit scale and min of sub-block j, unpacked from the 12 packed bytes.
void unpack_scale_min(int j, const std::uint8_t* packed, std::uint8_t* scale, std::uint8_t* min) {
  if (j < 4) {
    *scale = packed[j] & 63;
    *min = packed[j + 4] & 63;
  } else {
    *scale = static_cast<std::uint8_t>((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
    *min = static_cast<std::uint8_t>((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
  }
}

void quantize_block(const float* x, BlockQ5K& block) {
  std::uint8_t L[kBlockSize];
  float mins[kSubBlocks];
  float scales[kSubBlocks];
  float weights[kSubBlock];

  float max_scale = 0;  // the mins are subtracted, so scales are never negative
  float max_min = 0;
  for (int j = 0; j < kSubBlocks; ++j) {
    const float* xs = x + kSubBlock * j;
    float sum_x2 = 0;
    for (int l = 0; l < kSubBlock; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / kSubBlock);
    for (int l = 0; l < kSubBlock; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_scale_and_min(xs, weights, L + kSubBlock * j, &mins[j]);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? kMaxScale / max_scale : 0.f;
  const float inv_min = max_min > 0 ? kMaxScale / max_min : 0.f;
  for (int j = 0; j < kSubBlocks; ++j) {
    // ggml narrows to uint8_t before clamping; keep that wrap-around for out-of-range values.
    auto ls = static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j]));
    auto lm = static_cast<std::uint8_t>(nearest_int(inv_min * mins[j]));
    ls = std::min<std::uint8_t>(kMaxScale, ls);
    lm = std::min<std::uint8_t>(kMaxScale, lm);
    if (j < 4) {
      block.scales[j] = ls;
      block.scales[j + 4] = lm;
    } else {
      block.scales[j + 4] = static_cast<std::uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      block.scales[j - 4] |= static_cast<std::uint8_t>((ls >> 4) << 6);
      block.scales[j] |= static_cast<std::uint8_t>((lm >> 4) << 6);
    }
  }
  block.d = fp32_to_fp16(max_scale / kMaxScale);
  block.dmin = fp32_to_fp16(max_min / kMaxScale);

  // Requantize against the scales as stored (fp16 super-scales times 6-bit sub-scales). A sub-block
  // whose stored scale is zero keeps the quants of its fit.
  for (int j = 0; j < kSubBlocks; ++j) {
    std::uint8_t sc = 0;
    std::uint8_t m = 0;
    unpack_scale_min(j, block.scales, &sc, &m);
    const float d = fp16_to_fp32(block.d) * sc;
    if (d == 0.0f) continue;
    const float dm = fp16_to_fp32(block.dmin) * m;
    for (int i = 0; i < kSubBlock; ++i) {
      const int l = nearest_int((x[kSubBlock * j + i] + dm) / d);
      L[kSubBlock * j + i] = static_cast<std::uint8_t>(std::max(0, std::min(kMaxQuant, l)));
    }
  }

  // Low 4 bits: two sub-blocks per 32 bytes (low nibble, high nibble). 5th bit: bit 2k / 2k+1 of
  // qh[i] for sub-blocks 2k / 2k+1.
  std::memset(block.qh, 0, sizeof(block.qh));
  std::uint8_t* ql = block.qs;
  std::uint8_t high_bit_lo = 1;
  std::uint8_t high_bit_hi = 2;
  for (int n = 0; n < static_cast<int>(kBlockSize); n += 64) {
    for (int i = 0; i < 32; ++i) {
      int l1 = L[n + i];
      if (l1 > 15) {
        l1 -= 16;
        block.qh[i] |= high_bit_lo;
      }
      int l2 = L[n + i + 32];
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
  const float d = fp16_to_fp32(block.d);
  const float dmin = fp16_to_fp32(block.dmin);
  const std::uint8_t* ql = block.qs;
  std::uint8_t high_bit_lo = 1;
  std::uint8_t high_bit_hi = 2;
  for (int j = 0; j < kSubBlocks; j += 2) {
    std::uint8_t sc = 0;
    std::uint8_t m = 0;
    unpack_scale_min(j, block.scales, &sc, &m);
    const float d1 = d * sc;
    const float m1 = dmin * m;
    unpack_scale_min(j + 1, block.scales, &sc, &m);
    const float d2 = d * sc;
    const float m2 = dmin * m;
    for (int l = 0; l < 32; ++l) {
      *y++ = d1 * ((ql[l] & 0xF) + ((block.qh[l] & high_bit_lo) ? 16 : 0)) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      *y++ = d2 * ((ql[l] >> 4) + ((block.qh[l] & high_bit_hi) ? 16 : 0)) - m2;
    }
    ql += 32;
    high_bit_lo = static_cast<std::uint8_t>(high_bit_lo << 2);
    high_bit_hi = static_cast<std::uint8_t>(high_bit_hi << 2);
  }
}

}  // namespace

void quantize_q5k(std::span<const float> x, std::span<BlockQ5K> out) {
  detail::require_whole_blocks("quantize_q5k", x.size(), out.size());
  for (std::size_t b = 0; b < out.size(); ++b) quantize_block(x.data() + b * kBlockSize, out[b]);
}

void dequantize_q5k(std::span<const BlockQ5K> in, std::span<float> out) {
  detail::require_whole_blocks("dequantize_q5k", out.size(), in.size());
  for (std::size_t b = 0; b < in.size(); ++b) dequantize_block(in[b], out.data() + b * kBlockSize);
}

}  // namespace brick::quant
