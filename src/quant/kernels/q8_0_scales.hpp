#pragma once
// The fp16 scales of Q8_0 blocks into a vector without a gather, an insert per block or a permute of
// wide loads: four d's are assembled in a general register (integer operations, off the vector
// ports the products use) and moved across at once. On Zen 5 the Q8_0 row kernels ran faster so
// than with any of those (rows in L2: AVX2 1.2x against an insert per d, AVX-VNNI 1.5x against a
// vpgatherdd of eight, AVX-512 VNNI 1.26x against vpermt2w from the quants' lines;
// bench/RESULTS.md). Everything here is in an anonymous namespace so that each translation unit
// keeps its own copy.
#include <immintrin.h>

#include <cstdint>

#include "brick/quant/q8_0.hpp"

namespace brick::quant::kernels {
namespace {

// The d of blocks a, b, c and e as the fp16 words 0-3 of a vector (the upper words zero).
inline __m128i four_scales(const BlockQ80& a, const BlockQ80& b, const BlockQ80& c, const BlockQ80& e) {
  return _mm_cvtsi64_si128(static_cast<long long>(std::uint64_t{a.d} | std::uint64_t{b.d} << 16 |
                                                  std::uint64_t{c.d} << 32 | std::uint64_t{e.d} << 48));
}

// The d of blocks[0..3] as floats.
inline __m128 four_scales_as_floats(const BlockQ80* blocks) {
  return _mm_cvtph_ps(four_scales(blocks[0], blocks[1], blocks[2], blocks[3]));
}

}  // namespace
}  // namespace brick::quant::kernels
