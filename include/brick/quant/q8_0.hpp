#pragma once
// Q8_0, byte-compatible with llama.cpp / ggml (GGML_TYPE_Q8_0): blocks of 32 values x ~= d * q with
// an fp16 scale and 8-bit quants. It is a weight format and also the activation format llama.cpp's
// CPU mat-vec converts x into for Q8_0 weights; ggml quantizes the two differently (see below).
#include <cstddef>
#include <cstdint>
#include <type_traits>

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

}  // namespace brick::quant
