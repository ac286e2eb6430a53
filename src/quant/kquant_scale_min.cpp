// The scale/min fit of Q4_K and Q5_K, operation for operation ggml's (see kquant_common.hpp for why
// the order of float operations is part of the format).
#include "quant/kquant_scale_min.hpp"

#include <algorithm>
#include <cmath>

#include "brick/quant/fp16.hpp"
#include "quant/kquant_common.hpp"

namespace brick::quant::detail {
namespace {

constexpr int kMaxScale = 63;  // 6-bit sub-block scales and mins

// Fits x ~= scale * L + min (min <= 0) over one sub-block by weighted least squares, trying the
// candidate inverse scales of `fit`. Returns the scale and stores -min in *negated_min (ggml's
// make_qkx2_quants with squared error).
float fit_scale_and_min(const float* x, const float* weights, const ScaleMinFit& fit, std::uint8_t* L,
                        float* negated_min) {
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < kScaleMinSubBlock; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill_n(L, kScaleMinSubBlock, std::uint8_t{0});
    *negated_min = -min;
    return 0.0f;
  }
  float iscale = fit.max_quant / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < kScaleMinSubBlock; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<std::uint8_t>(std::max(0, std::min(fit.max_quant, l)));
    float diff = scale * L[i] + min - x[i];
    diff = diff * diff;
    best_error += weights[i] * diff;
  }
  std::uint8_t candidate[kScaleMinSubBlock];
  for (int step = 0; step <= fit.steps; ++step) {
    iscale = (fit.rmin + fit.rdelta * step + fit.max_quant) / (max - min);
    float sum_l = 0;
    float sum_l2 = 0;
    float sum_xl = 0;
    for (int i = 0; i < kScaleMinSubBlock; ++i) {
      int l = nearest_int(iscale * (x[i] - min));
      l = std::max(0, std::min(fit.max_quant, l));
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
      for (int i = 0; i < kScaleMinSubBlock; ++i) {
        float diff = this_scale * candidate[i] + this_min - x[i];
        diff = diff * diff;
        error += weights[i] * diff;
      }
      if (error < best_error) {
        std::copy_n(candidate, kScaleMinSubBlock, L);
        best_error = error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *negated_min = -min;
  return scale;
}

}  // namespace

ScaleMinBlock quantize_scale_min(const float* x, const ScaleMinFit& fit) {
  ScaleMinBlock block;
  float mins[kScaleMinSubBlocks];
  float scales[kScaleMinSubBlocks];
  float weights[kScaleMinSubBlock];

  float max_scale = 0;  // the mins are subtracted, so scales are never negative
  float max_min = 0;
  for (int j = 0; j < kScaleMinSubBlocks; ++j) {
    const float* xs = x + kScaleMinSubBlock * j;
    float sum_x2 = 0;
    for (int l = 0; l < kScaleMinSubBlock; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / kScaleMinSubBlock);
    for (int l = 0; l < kScaleMinSubBlock; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] = fit_scale_and_min(xs, weights, fit, block.L + kScaleMinSubBlock * j, &mins[j]);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }

  const float inv_scale = max_scale > 0 ? kMaxScale / max_scale : 0.f;
  const float inv_min = max_min > 0 ? kMaxScale / max_min : 0.f;
  for (int j = 0; j < kScaleMinSubBlocks; ++j) {
    // ggml narrows to uint8_t before clamping; keep that wrap-around for out-of-range values.
    auto ls = static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j]));
    auto lm = static_cast<std::uint8_t>(nearest_int(inv_min * mins[j]));
    ls = std::min<std::uint8_t>(kMaxScale, ls);
    lm = std::min<std::uint8_t>(kMaxScale, lm);
    pack_scale_min(block.scales, j, {ls, lm});
  }
  block.d = fp32_to_fp16(max_scale / kMaxScale);
  block.dmin = fp32_to_fp16(max_min / kMaxScale);

  // Requantize against the scales as stored (fp16 super-scales times 6-bit sub-scales). A sub-block
  // whose stored scale is zero keeps the quants of its fit.
  for (int j = 0; j < kScaleMinSubBlocks; ++j) {
    const ScaleMin sm = unpack_scale_min(block.scales, j);
    const float d = fp16_to_fp32(block.d) * sm.scale;
    if (d == 0.0f) continue;
    const float dm = fp16_to_fp32(block.dmin) * sm.min;
    for (int i = 0; i < kScaleMinSubBlock; ++i) {
      const int l = nearest_int((x[kScaleMinSubBlock * j + i] + dm) / d);
      block.L[kScaleMinSubBlock * j + i] = static_cast<std::uint8_t>(std::max(0, std::min(fit.max_quant, l)));
    }
  }
  return block;
}

SubBlockPair sub_block_pair(fp16_t d, fp16_t dmin, const std::uint8_t* packed, int j) {
  const float scale = fp16_to_fp32(d);
  const float min = fp16_to_fp32(dmin);
  const ScaleMin first = unpack_scale_min(packed, j);
  const ScaleMin second = unpack_scale_min(packed, j + 1);
  return {scale * first.scale, min * first.min, scale * second.scale, min * second.min};
}

}  // namespace brick::quant::detail
