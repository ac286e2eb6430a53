#pragma once
// The AVX-512 Q8_0·Q8_0 kernels, shared by dot_q8_0_q8_0_avx512.cpp (F/BW) and
// dot_q8_0_q8_0_avx512vnni.cpp (VNNI), on the row loops of dot_rows_avx512_impl.hpp. Block sums are
// exact for every int8 value (-128 included) in both; each block's sum is scaled in float lanes by
// d_w * d_x with one FMA.
// - Bw: one block per step, both operands widened to int16 and multiplied with vpmaddwd (16 int32
//   lanes per block).
// - Vnni: two blocks per zmm. vpdpbusd multiplies unsigned by signed bytes, so the weights go in as
//   w + 128 (w ^ 0x80) and the sum starts from -128 * (the sum of each four activation quants),
//   which the activation side computes once for all the rows of a step.
#include <cstddef>
#include <cstdint>

#include "brick/quant/q8_0.hpp"
#include "quant/kernels/dot_rows_avx512_impl.hpp"

namespace brick::quant::kernels {
namespace {

inline __m512 broadcast_scale(std::uint16_t d) { return _mm512_set1_ps(_cvtsh_ss(d)); }

struct Q80DotBw {
  static constexpr std::size_t kStep = 1;
  static constexpr std::size_t kVectors = 1;
  struct Activation {
    __m512i qs;  // int16
    __m512 scale;
  };
  Activation activation(const BlockQ80* x) const {
    return {_mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs))), broadcast_scale(x->d)};
  }
  void accumulate(const BlockQ80* w, const Activation& a, __m512 (&acc)[1]) const {
    const __m512i wq = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w->qs)));
    acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(wq, a.qs)),
                             _mm512_mul_ps(broadcast_scale(w->d), a.scale), acc[0]);
  }
  // kStep is 1: never called.
  Activation activation_tail(const BlockQ80* x, std::size_t) const { return activation(x); }
  void accumulate_tail(const BlockQ80* w, const Activation& a, __m512 (&acc)[1], std::size_t) const {
    accumulate(w, a, acc);
  }
};

// A template so that the AVX-512 F/BW translation unit, which never instantiates it, compiles.
template <bool kVnni>
struct Q80DotVnni {
  static_assert(kVnni);
  static constexpr std::size_t kStep = 2;
  static constexpr std::size_t kVectors = 1;
  struct Activation {
    __m512i qs;          // block 0's quants in the low 256 bits, block 1's in the high ones
    __m512i correction;  // -128 * the sum of each four quants
    __m512 scale;        // block 0's d in lanes 0-7, block 1's in lanes 8-15
  };

  // The quants of blocks p[0] and p[1] (only p[0] when kOne, zeros above).
  template <bool kOne>
  static __m512i quants(const BlockQ80* p) {
    const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p[0].qs));
    if constexpr (kOne) return _mm512_zextsi256_si512(first);
    return _mm512_inserti64x4(_mm512_castsi256_si512(first), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p[1].qs)), 1);
  }
  // [d of p[0] in lanes 0-7, d of p[1] in lanes 8-15] (zeros above lane 7 when kOne). A pair of blocks
  // is 68 bytes: one 64-byte load holds both scales, which vpermw then spreads.
  template <bool kOne>
  static __m512 scales(const BlockQ80* p) {
    if constexpr (kOne) return _mm512_cvtph_ps(_mm256_zextsi128_si256(_mm_set1_epi16(static_cast<short>(p[0].d))));
    const __m512i spread = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17, 17, 17, 17, 17, 17, 17,
                                            17, 0, 0, 0, 0, 0, 0, 0, 0);
    return _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(spread, _mm512_loadu_si512(p))));
  }
  template <bool kOne>
  static Activation make_activation(const BlockQ80* x) {
    const __m512i qs = quants<kOne>(x);
    const __m512i sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(static_cast<char>(0x80)), qs);
    return {qs, _mm512_sub_epi32(_mm512_setzero_si512(), sums), scales<kOne>(x)};
  }
  template <bool kOne>
  static void add(const BlockQ80* w, const Activation& a, __m512 (&acc)[1]) {
    const __m512i unsigned_w = _mm512_xor_si512(quants<kOne>(w), _mm512_set1_epi8(static_cast<char>(0x80)));
    const __m512i sums = _mm512_dpbusd_epi32(a.correction, unsigned_w, a.qs);
    acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(scales<kOne>(w), a.scale), acc[0]);
  }

  Activation activation(const BlockQ80* x) const { return make_activation<false>(x); }
  void accumulate(const BlockQ80* w, const Activation& a, __m512 (&acc)[1]) const { add<false>(w, a, acc); }
  // The last block of an odd count, as a step whose second block is all zeros.
  Activation activation_tail(const BlockQ80* x, std::size_t) const { return make_activation<true>(x); }
  void accumulate_tail(const BlockQ80* w, const Activation& a, __m512 (&acc)[1], std::size_t) const {
    add<true>(w, a, acc);
  }
};

}  // namespace
}  // namespace brick::quant::kernels
