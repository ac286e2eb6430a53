// Q8_0: blocks of 32 values x ~= d * q with an fp16 d and int8 q, quantized two ways (see
// q8_0.hpp): the weight quantizer is ggml's quantize_row_q8_0_ref, the activation quantizer the x86
// code of ggml-cpu's quantize_row_q8_0, which llama.cpp's mat-vec runs on x for Q8_0 weights. Both
// are scalar code here operation for operation, so that every input, NaN and infinities included,
// gives ggml's bytes; the activation quantizer also has AVX2 and AVX-512 kernels with the same
// bytes.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "brick/core/error.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/q8_0.hpp"
#include "quant/kernels/quantize_q8_0.hpp"

namespace brick::quant {
namespace {

void require_whole_blocks(const char* function, std::size_t values, std::size_t blocks) {
  if (values != kQ80BlockSize * blocks) {
    throw InvalidArgument(fmt::format("{}: {} float values for {} blocks; a Q8_0 block holds exactly {} values", function,
                                      values, blocks, kQ80BlockSize));
  }
}

// What ggml's x86 build makes of a float converted to int8_t (cvttss2si, then the low byte): a NaN
// or a value outside the int32 range is INT32_MIN, whose low byte is 0.
std::int8_t low_byte_of_truncation(float r) {
  const std::int32_t i = r >= -0x1p31f && r < 0x1p31f ? static_cast<std::int32_t>(r) : INT32_MIN;
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(i & 0xFF));
}

// cvtps2dq then the saturating packs to int8: a NaN or a value outside the int32 range is INT32_MIN,
// which saturates to -128.
std::int8_t saturated_int8(float r) {
  const std::int32_t i = r >= -0x1p31f && r < 0x1p31f ? static_cast<std::int32_t>(r) : INT32_MIN;
  return static_cast<std::int8_t>(std::clamp(i, -128, 127));
}

// maxps: the second operand unless the first is greater, so a NaN in either gives the second.
float maxps(float a, float b) { return a > b ? a : b; }

// quantize_row_q8_0_ref: amax over the block in order (ggml's MAX, the second operand unless the
// first is greater: a NaN is kept only when it comes last), d = amax / 127, q = round(x / d) with
// ties away from zero.
void quantize_weight_block(const float* x, BlockQ80& out) {
  float amax = 0.0f;
  for (std::size_t j = 0; j < kQ80BlockSize; ++j) amax = maxps(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  out.d = fp32_to_fp16_canonical_nan(d);
  for (std::size_t j = 0; j < kQ80BlockSize; ++j) out.qs[j] = low_byte_of_truncation(std::round(x[j] * id));
}

// ggml-cpu's x86 quantize_row_q8_0: amax as eight lanes of four values (x[j], x[j+8], x[j+16],
// x[j+24]), reduced 8 -> 4 -> 2 -> 1 with maxps, the high half first; id = 127 / amax (not 1 / d);
// q = x * id rounded half to even and saturated.
void quantize_activation_block(const float* x, BlockQ80& out) {
  float lanes[8];
  for (std::size_t j = 0; j < 8; ++j) {
    lanes[j] = std::fabs(x[j]);
    for (std::size_t k = 1; k < 4; ++k) lanes[j] = maxps(lanes[j], std::fabs(x[j + 8 * k]));
  }
  float four[4];
  for (std::size_t j = 0; j < 4; ++j) four[j] = maxps(lanes[j + 4], lanes[j]);
  const float amax = maxps(maxps(four[0], four[2]), maxps(four[1], four[3]));
  out.d = fp32_to_fp16_canonical_nan(amax / 127.f);
  const float id = amax != 0.0f ? 127.f / amax : 0.0f;
  for (std::size_t j = 0; j < kQ80BlockSize; ++j) out.qs[j] = saturated_int8(std::nearbyint(x[j] * id));
}

}  // namespace

void quantize_q8_0(std::span<const float> x, std::span<BlockQ80> out) {
  require_whole_blocks("quantize_q8_0", x.size(), out.size());
  for (std::size_t b = 0; b < out.size(); ++b) quantize_weight_block(x.data() + b * kQ80BlockSize, out[b]);
}

void quantize_q8_0_activation(std::span<const float> x, std::span<BlockQ80> out, Backend backend) {
  require_whole_blocks("quantize_q8_0_activation", x.size(), out.size());
  switch (resolve(backend)) {
    case Backend::Avx512: return kernels::quantize_q8_0_activation_avx512(x.data(), out.data(), out.size());
    case Backend::Avx2: return kernels::quantize_q8_0_activation_avx2(x.data(), out.data(), out.size());
    case Backend::Auto:
    case Backend::Scalar: break;
  }
  for (std::size_t b = 0; b < out.size(); ++b) quantize_activation_block(x.data() + b * kQ80BlockSize, out[b]);
}

void dequantize_q8_0(std::span<const BlockQ80> in, std::span<float> out) {
  require_whole_blocks("dequantize_q8_0", out.size(), in.size());
  for (std::size_t b = 0; b < in.size(); ++b) {
    const float d = fp16_to_fp32(in[b].d);
    for (std::size_t j = 0; j < kQ80BlockSize; ++j) out[b * kQ80BlockSize + j] = in[b].qs[j] * d;
  }
}

}  // namespace brick::quant
