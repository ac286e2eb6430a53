#pragma once
// The fp16 scales of Q8_0 blocks into a vector, four at a time (fp16_words.hpp). Everything here is
// in an anonymous namespace so that each translation unit keeps its own copy.
#include <immintrin.h>

#include "brick/quant/q8_0.hpp"
#include "quant/kernels/fp16_words.hpp"

namespace brick::quant::kernels {
namespace {

// The d of blocks a, b, c and e as the fp16 words 0-3 of a vector (the upper words zero).
inline __m128i four_scales(const BlockQ80& a, const BlockQ80& b, const BlockQ80& c, const BlockQ80& e) {
  return fp16_words(a.d, b.d, c.d, e.d);
}

// The d of blocks[0..3] as floats.
inline __m128 four_scales_as_floats(const BlockQ80* blocks) {
  return fp16_words_as_floats(blocks[0].d, blocks[1].d, blocks[2].d, blocks[3].d);
}

}  // namespace
}  // namespace brick::quant::kernels
