#pragma once
// k-quant blocks byte-compatible with llama.cpp / ggml (GGML_TYPE_Q4_K, Q5_K, Q6_K, Q8_K): 256
// values per super-block. A row quantized here is the same bytes as one quantized by ggml, and dequantizes to
// the same floats.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "brick/core/backend.hpp"

namespace brick::quant {

inline constexpr std::size_t kBlockSize = 256;  // values per k-quant super-block

// IEEE binary16 bits, as stored in GGUF files.
using fp16_t = std::uint16_t;

#pragma pack(push, 1)
// 4.5 bits per weight: 8 sub-blocks of 32, each with a 6-bit scale and a 6-bit min.
struct BlockQ4K {
  fp16_t d;                         // super-block scale for the sub-block scales
  fp16_t dmin;                      // super-block scale for the sub-block mins
  std::uint8_t scales[12];          // 8 scales and 8 mins, 6 bits each, packed as in Q5_K
  std::uint8_t qs[kBlockSize / 2];  // 4-bit quants: sub-blocks 2k and 2k+1 in the low and high
                                    // nibbles of bytes 32k..32k+31
};

// 5.5 bits per weight: 8 sub-blocks of 32, each with a 6-bit scale and a 6-bit min.
struct BlockQ5K {
  fp16_t d;                     // super-block scale for the sub-block scales
  fp16_t dmin;                  // super-block scale for the sub-block mins
  std::uint8_t scales[12];      // 8 scales and 8 mins, 6 bits each, packed
  std::uint8_t qh[32];          // high (5th) bit of each quant
  std::uint8_t qs[kBlockSize / 2];  // low 4 bits of each quant
};

// 6.5625 bits per weight: 16 sub-blocks of 16, each with an 8-bit signed scale.
struct BlockQ6K {
  std::uint8_t ql[kBlockSize / 2];  // low 4 bits of each quant
  std::uint8_t qh[kBlockSize / 4];  // high 2 bits of each quant
  std::int8_t scales[16];
  fp16_t d;
};

// The activation format the k-quant dot products take: 8-bit quants with one float scale and the
// sums of each group of 16 quants.
struct BlockQ8K {
  float d;
  std::int8_t qs[kBlockSize];
  std::int16_t bsums[kBlockSize / 16];
};
#pragma pack(pop)

static_assert(sizeof(BlockQ4K) == 144 && std::is_standard_layout_v<BlockQ4K>);
static_assert(offsetof(BlockQ4K, dmin) == 2 && offsetof(BlockQ4K, scales) == 4 && offsetof(BlockQ4K, qs) == 16);
static_assert(sizeof(BlockQ5K) == 176 && std::is_standard_layout_v<BlockQ5K>);
static_assert(offsetof(BlockQ5K, dmin) == 2 && offsetof(BlockQ5K, scales) == 4 &&
              offsetof(BlockQ5K, qh) == 16 && offsetof(BlockQ5K, qs) == 48);
static_assert(sizeof(BlockQ6K) == 210 && std::is_standard_layout_v<BlockQ6K>);
static_assert(offsetof(BlockQ6K, qh) == 128 && offsetof(BlockQ6K, scales) == 192 &&
              offsetof(BlockQ6K, d) == 208);
static_assert(sizeof(BlockQ8K) == 292 && std::is_standard_layout_v<BlockQ8K>);
static_assert(offsetof(BlockQ8K, qs) == 4 && offsetof(BlockQ8K, bsums) == 260);

// x.size() must equal 256 * out.size() (else InvalidArgument). Same bytes as ggml's
// quantize_row_q4_K_ref / quantize_row_q5_K_ref / quantize_row_q6_K_ref / quantize_row_q8_K (checked
// against ggml 0.23.0) for every input, non-finite ones included. An all-zero block is all-zero
// bytes in every format (for Q8_K this defines the bsums that ggml leaves unwritten). Q4_K, Q5_K and
// Q6_K are scalar code: quantizing weights is offline work. quantize_q8k runs once per mat-vec, so
// it has AVX2 and AVX-512 kernels, with the same bytes as its scalar reference on every backend.
void quantize_q4k(std::span<const float> x, std::span<BlockQ4K> out);
void quantize_q5k(std::span<const float> x, std::span<BlockQ5K> out);
void quantize_q6k(std::span<const float> x, std::span<BlockQ6K> out);
void quantize_q8k(std::span<const float> x, std::span<BlockQ8K> out, Backend backend = Backend::Auto);

// out.size() must equal 256 * in.size() (else InvalidArgument). Same floats as ggml's
// dequantize_row_q4_K / dequantize_row_q5_K / dequantize_row_q6_K / dequantize_row_q8_K.
void dequantize_q4k(std::span<const BlockQ4K> in, std::span<float> out);
void dequantize_q5k(std::span<const BlockQ5K> in, std::span<float> out);
void dequantize_q6k(std::span<const BlockQ6K> in, std::span<float> out);
void dequantize_q8k(std::span<const BlockQ8K> in, std::span<float> out);

// Dot product of a weight row with a Q8_K activation row of the same number of blocks (else
// InvalidArgument). Integer inner sums are exact; the float sum over the blocks runs in another
// order on each backend, so backends agree with Scalar to about 1e-6 of the sum of the blocks'
// magnitudes (sum over blocks of |d * x.d * block total|), not of the result: where blocks cancel,
// the relative difference of the results can be far larger (1.7e-3 was seen on random blocks).
// As in ggml, the SIMD kernels take x's bsums as given (the Q6_K offset and the Q4_K / Q5_K mins
// come from them) while the scalar reference sums the quants itself, so x must hold the bsums that
// quantize_q8k writes: each call checks them first (InvalidArgument naming the block otherwise).
float dot_q4k_q8k(std::span<const BlockQ4K> w, std::span<const BlockQ8K> x,
                  Backend backend = Backend::Auto);
float dot_q5k_q8k(std::span<const BlockQ5K> w, std::span<const BlockQ8K> x,
                  Backend backend = Backend::Auto);
float dot_q6k_q8k(std::span<const BlockQ6K> w, std::span<const BlockQ8K> x,
                  Backend backend = Backend::Auto);

}  // namespace brick::quant
