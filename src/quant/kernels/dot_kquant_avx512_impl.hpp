#pragma once
// The AVX-512 Q5_K·Q8_K and Q6_K·Q8_K kernels, shared by two translation units: dot_*_avx512.cpp
// (AVX-512 F/BW: scales applied with vpmaddwd + vpaddd) and dot_*_avx512vnni.cpp (the same with
// VNNI's vpdpwssd, which multiplies by the scales and accumulates in one instruction). Everything
// here is in an anonymous namespace so that each TU keeps its own copy, compiled with its own flags.
//
// Why vpdpwssd and not vpdpbusd: vpdpbusd sums four u8*s8 products straight into int32 lanes, but
// k-quant sub-block scales must then be applied to those lanes with a 32-bit multiply and an add
// (three instructions per 64 quants). vpmaddubsw followed by vpdpwssd does the products, the scale
// and the accumulation in two, with the same exact integer result.
// GCC 12 reports its own AVX-512 intrinsics' deliberately undefined pass-through operands as
// uninitialised at -O3; the warning is about the header, not this code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "brick/quant/kquants.hpp"

namespace brick::quant::kernels {
namespace {

// acc + (products * scales), pairs of int16 summed into int32 lanes.
template <bool kVnni>
inline __m512i accumulate_scaled(__m512i acc, __m512i products, __m512i scales) {
  if constexpr (kVnni) {
    return _mm512_dpwssd_epi32(acc, products, scales);
  } else {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(products, scales));
  }
}

inline float horizontal_sum(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// Per 128-bit lane, [sum of that lane of v0, ... of v3]: the first step of reducing four blocks'
// integer sums at once, exactly.
inline __m512i lane_sums(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(v0, v1), _mm512_unpackhi_epi32(v0, v1));
  const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(v2, v3), _mm512_unpackhi_epi32(v2, v3));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
}

// vpermw indices that spread `first` + lane / lanes_per_scale over the 32 int16 lanes of a zmm.
inline __m512i scale_index(int first, int lanes_per_scale) {
  alignas(64) std::int16_t index[32];
  for (int lane = 0; lane < 32; ++lane) index[lane] = static_cast<std::int16_t>(first + lane / lanes_per_scale);
  return _mm512_load_si512(index);
}

// A 32-byte load repeated into both 256-bit halves of a zmm.
inline __m512i load_twice(const std::uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Q6_K: 64 quants per zmm. A half-block (128 values) is 64 bytes of ql and 32 of qh; the low
// nibbles of ql are values 0..63 (qh bits 0-1 for the first 32, bits 2-3 for the next), the high
// nibbles values 64..127 (qh bits 4-5, then 6-7). qh is loaded into both 256-bit halves and shifted
// by a different amount in each so one shift lines up both groups of bits. The quants are used
// unsigned (0..63) and 32 * sum(sc_j * bsum_j) is removed once per block.
struct Q6KConstants {
  __m512i low_nibble = _mm512_set1_epi8(0x0F);
  __m512i high_bits = _mm512_set1_epi8(0x30);
  __m512i shift_low_values = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  __m512i shift_high_values = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  __m512i scale_lanes[4] = {scale_index(0, 8), scale_index(4, 8), scale_index(8, 8), scale_index(12, 8)};
};

// The block's integer sum sum_j sc_j * (q - 32) . y, spread over 16 int32 lanes.
template <bool kVnni>
inline __m512i block_sum(const BlockQ6K& w, const BlockQ8K& x, const Q6KConstants& k) {
  const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales)));
  const __m512i scales = _mm512_castsi256_si512(scales16);  // vpermw only reads lanes 0-15
  const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums));
  const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(scales16, bsums), 5);
  __m512i sum = _mm512_setzero_si512();
  for (int half = 0; half < 2; ++half) {
    const __m512i ql = _mm512_loadu_si512(w.ql + 64 * half);
    const __m512i qh = load_twice(w.qh + 32 * half);
    const __m512i qh_low = _mm512_and_si512(_mm512_sllv_epi16(qh, k.shift_low_values), k.high_bits);
    const __m512i qh_high = _mm512_and_si512(_mm512_srlv_epi16(qh, k.shift_high_values), k.high_bits);
    // (a & low_nibble) | b, b having only bits 4-5.
    const __m512i q_low = _mm512_ternarylogic_epi32(ql, k.low_nibble, qh_low, 0xEA);
    const __m512i q_high = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), k.low_nibble, qh_high, 0xEA);
    const __m512i y_low = _mm512_loadu_si512(x.qs + 128 * half);
    const __m512i y_high = _mm512_loadu_si512(x.qs + 128 * half + 64);
    sum = accumulate_scaled<kVnni>(sum, _mm512_maddubs_epi16(q_low, y_low),
                                   _mm512_permutexvar_epi16(k.scale_lanes[2 * half], scales));
    sum = accumulate_scaled<kVnni>(sum, _mm512_maddubs_epi16(q_high, y_high),
                                   _mm512_permutexvar_epi16(k.scale_lanes[2 * half + 1], scales));
  }
  return _mm512_mask_sub_epi32(sum, 0x00FF, sum, _mm512_castsi256_si512(offset));
}

template <bool kVnni>
float dot_q6k_q8k_avx512_impl(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  const Q6KConstants k;
  __m128 acc = _mm_setzero_ps();
  for (std::size_t b = 0; b < blocks; b += 4) {
    __m512i sums[4] = {};
    alignas(16) float scales[4] = {};
    for (std::size_t i = 0; i < 4 && b + i < blocks; ++i) {
      sums[i] = block_sum<kVnni>(w[b + i], x[b + i], k);
      scales[i] = _cvtsh_ss(w[b + i].d) * x[b + i].d;
    }
    const __m512i lanes = lane_sums(sums[0], sums[1], sums[2], sums[3]);
    const __m256i halves = _mm256_add_epi32(_mm512_castsi512_si256(lanes), _mm512_extracti64x4_epi64(lanes, 1));
    const __m128i block_totals = _mm_add_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
    acc = _mm_fmadd_ps(_mm_load_ps(scales), _mm_cvtepi32_ps(block_totals), acc);
  }
  return horizontal_sum(acc);
}

// The 8 scales (bytes 0-7) and 8 mins (bytes 8-15) of a Q5_K block, see dot_q5k_q8k_scalar.cpp.
inline __m128i unpack_scales_mins(const std::uint8_t* packed) {
  std::uint32_t word[3];
  std::memcpy(word, packed, sizeof word);
  const std::uint32_t six = 0x3F3F3F3Fu;
  const std::uint32_t four = 0x0F0F0F0Fu;
  const std::uint32_t two = 0x03030303u;
  const std::uint32_t scales_lo = word[0] & six;
  const std::uint32_t scales_hi = (word[2] & four) | (((word[0] >> 6) & two) << 4);
  const std::uint32_t mins_lo = word[1] & six;
  const std::uint32_t mins_hi = ((word[2] >> 4) & four) | (((word[1] >> 6) & two) << 4);
  return _mm_set_epi32(static_cast<int>(mins_hi), static_cast<int>(mins_lo),
                       static_cast<int>(scales_hi), static_cast<int>(scales_lo));
}

// Q5_K: 64 quants per zmm, one 32-byte chunk of qs loaded into both halves: the low half keeps the
// low nibbles (sub-block 2c), the high half is shifted down to the high nibbles (sub-block 2c+1),
// which is exactly the order of the Q8_K quants. The fifth bit of sub-block j is bit j of qh.
struct Q5KConstants {
  __m512i low_nibble = _mm512_set1_epi8(0x0F);
  __m512i sixteen = _mm512_set1_epi8(16);
  __m512i nibble_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  // Each min applies to two Q8_K group sums of 16: repeat every min byte twice.
  __m128i repeat_mins = _mm_set_epi8(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8);
  __m512i fifth_bit[4];
  __m512i scale_lanes[4];
  Q5KConstants() {
    for (int c = 0; c < 4; ++c) {
      fifth_bit[c] = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * c))),
                                        _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1))), 1);
      scale_lanes[c] = scale_index(2 * c, 16);
    }
  }
};

// [sum_j sc_j * q . y folded to 8 lanes | sum_j m_j * bsum_j over 8 lanes].
template <bool kVnni>
inline __m512i block_sums(const BlockQ5K& w, const BlockQ8K& x, const Q5KConstants& k) {
  const __m128i scales_mins = unpack_scales_mins(w.scales);
  const __m512i scales = _mm512_castsi128_si512(_mm_cvtepu8_epi16(scales_mins));  // vpermw reads lanes 0-7
  const __m256i mins = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, k.repeat_mins));
  const __m256i min_sum = _mm256_madd_epi16(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
  const __m512i qh = load_twice(w.qh);
  __m512i sum = _mm512_setzero_si512();
  for (int c = 0; c < 4; ++c) {
    const __m512i packed = load_twice(w.qs + 32 * c);
    const __m512i nibbles = _mm512_and_si512(_mm512_srlv_epi16(packed, k.nibble_shift), k.low_nibble);
    const __mmask64 has_fifth_bit = _mm512_test_epi8_mask(qh, k.fifth_bit[c]);
    const __m512i q = _mm512_mask_add_epi8(nibbles, has_fifth_bit, nibbles, k.sixteen);
    const __m512i y = _mm512_loadu_si512(x.qs + 64 * c);
    sum = accumulate_scaled<kVnni>(sum, _mm512_maddubs_epi16(q, y),
                                   _mm512_permutexvar_epi16(k.scale_lanes[c], scales));
  }
  const __m256i folded = _mm256_add_epi32(_mm512_castsi512_si256(sum), _mm512_extracti64x4_epi64(sum, 1));
  return _mm512_inserti64x4(_mm512_castsi256_si512(folded), min_sum, 1);
}

template <bool kVnni>
float dot_q5k_q8k_avx512_impl(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  const Q5KConstants k;
  __m128 acc = _mm_setzero_ps();
  for (std::size_t b = 0; b < blocks; b += 4) {
    __m512i sums[4] = {};
    alignas(16) float d[4] = {};
    alignas(16) float dmin[4] = {};
    for (std::size_t i = 0; i < 4 && b + i < blocks; ++i) {
      sums[i] = block_sums<kVnni>(w[b + i], x[b + i], k);
      d[i] = _cvtsh_ss(w[b + i].d) * x[b + i].d;
      dmin[i] = _cvtsh_ss(w[b + i].dmin) * x[b + i].d;
    }
    // 128-bit lanes 0-1 hold the scaled sums, lanes 2-3 the min sums: add lane pairs.
    const __m512i lanes = lane_sums(sums[0], sums[1], sums[2], sums[3]);
    const __m512i pairs = _mm512_add_epi32(lanes, _mm512_shuffle_i32x4(lanes, lanes, _MM_SHUFFLE(2, 3, 0, 1)));
    acc = _mm_fmadd_ps(_mm_load_ps(d), _mm_cvtepi32_ps(_mm512_castsi512_si128(pairs)), acc);
    acc = _mm_fnmadd_ps(_mm_load_ps(dmin), _mm_cvtepi32_ps(_mm512_extracti32x4_epi32(pairs, 2)), acc);
  }
  return horizontal_sum(acc);
}

}  // namespace
}  // namespace brick::quant::kernels
