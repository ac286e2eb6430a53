#pragma once
// Q8_0, byte-compatible with llama.cpp / ggml (GGML_TYPE_Q8_0): blocks of 32 values x ~= d * q with
// an fp16 scale and 8-bit quants. It is a weight format and also the activation format llama.cpp's
// CPU mat-vec converts x into for Q8_0 weights; ggml quantizes the two differently (see below).
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "brick/core/backend.hpp"
#include "brick/quant/kquants.hpp"

namespace brick::quant {

inline constexpr std::size_t kQ80BlockSize = 32;  // values per Q8_0 block

#pragma pack(push, 1)
struct BlockQ80 {
  fp16_t d;
  std::int8_t qs[kQ80BlockSize];
};
#pragma pack(pop)

static_assert(sizeof(BlockQ80) == 34 && std::is_standard_layout_v<BlockQ80> && offsetof(BlockQ80, qs) == 2);

// Weights: the bytes of ggml's quantize_row_q8_0_ref (what ggml_quantize_chunk writes into a model
// file): d = amax / 127, q = round(x / d) rounded half away from zero. x.size() must equal 32 *
// out.size() (else InvalidArgument).
void quantize_q8_0(std::span<const float> x, std::span<BlockQ80> out);

// Activations: the bytes of ggml-cpu's quantize_row_q8_0 on x86 (its AVX / AVX2 code, which every
// x86 CPU variant of ggml-cpu but the baseline one runs): q = x * (127 / amax) rounded half to even,
// amax found with maxps semantics (a NaN is dropped unless it comes last in its lane), quants
// saturated to -128..127. Every backend gives the same bytes.
void quantize_q8_0_activation(std::span<const float> x, std::span<BlockQ80> out,
                              Backend backend = Backend::Auto);

// out.size() must equal 32 * in.size() (else InvalidArgument). Same floats as ggml's
// dequantize_row_q8_0.
void dequantize_q8_0(std::span<const BlockQ80> in, std::span<float> out);

// Dot product of a Q8_0 weight row with a Q8_0 activation row of the same number of blocks (else
// InvalidArgument). Block sums are exact integers; every backend agrees with Scalar to 1e-6 of the
// sum of the blocks' magnitudes.
float dot_q8_0_q8_0(std::span<const BlockQ80> w, std::span<const BlockQ80> x, Backend backend = Backend::Auto);

}  // namespace brick::quant
