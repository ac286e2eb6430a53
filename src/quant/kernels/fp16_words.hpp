#pragma once
// Four fp16 values from anywhere in memory (the d of four blocks, each in its own block) into one
// vector without a gather, an insert per value or a permute of wide loads: they are assembled in a
// general register (integer operations, off the vector ports the products use) and moved across at
// once. On Zen 5 the Q8_0 row kernels ran faster so than with any of those (rows in L2: AVX2 1.2x
// against an insert per d, AVX-VNNI 1.5x against a vpgatherdd of eight, AVX-512 VNNI 1.26x against
// vpermt2w from the quants' lines), the AVX2 k-quant row kernels up to 1.07x (bench/RESULTS.md).
// Everything here is in an anonymous namespace so that each translation unit keeps its own copy.
#include <immintrin.h>

#include <cstdint>

namespace brick::quant::kernels {
namespace {

// a, b, c and d as the fp16 words 0-3 of a vector (the upper words zero).
inline __m128i fp16_words(std::uint16_t a, std::uint16_t b, std::uint16_t c, std::uint16_t d) {
  return _mm_cvtsi64_si128(static_cast<long long>(std::uint64_t{a} | std::uint64_t{b} << 16 |
                                                  std::uint64_t{c} << 32 | std::uint64_t{d} << 48));
}

// a, b, c and d as floats (F16C).
inline __m128 fp16_words_as_floats(std::uint16_t a, std::uint16_t b, std::uint16_t c, std::uint16_t d) {
  return _mm_cvtph_ps(fp16_words(a, b, c, d));
}

}  // namespace
}  // namespace brick::quant::kernels
