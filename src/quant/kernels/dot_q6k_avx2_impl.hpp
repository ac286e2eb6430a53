#pragma once
// Q6_K·Q8_K with AVX2, shared by dot_q6k_q8k_avx2.cpp and dot_q6k_q8k_avxvnni.cpp (whose GEMM
// sums with vpdpbusd, the same integers). The 6-bit quants are used unsigned (0..63) so that
// _mm256_maddubs_epi16 can multiply them with the signed Q8_K quants; the -32 offset is removed once per super-block through
// Q8_K's group sums: sum(sc_j * (q-32) . y) = sum(sc_j * q . y) - 32 * sum(sc_j * bsum_j).
// maddubs cannot saturate here: two products of at most 63 * 128 stay below 2^15.
// Each block's integer sum is reduced exactly before its float scale is applied (four blocks per
// reduction), so the only rounding is one float multiply-add per block, as in the reference.
// Interleaved blocks (weight_layout.hpp) give the same integers with a quarter of the multiplies by
// scales: each 16-bit lane pair of their vectors holds one sub-block, so two vectors' products add
// as int16 and meet a vector of scales in one vpmaddwd.
//
// Everything here is in an anonymous namespace so that each translation unit keeps its own copy,
// compiled with its own flags.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "brick/quant/weight_layout.hpp"
#include "quant/kernels/dot_kquant_gemm_avx2_impl.hpp"
#include "quant/kernels/fp16_words.hpp"
#include "quant/kernels/row_lockstep.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

// The 16 sub-block scales as int16, even ones in the low 128-bit lane and odd ones in the high
// lane: chunk c (32 values, sub-blocks 2c and 2c+1) then needs element c of each lane repeated,
// one in-lane shuffle.
inline __m256i split_scales(__m128i scales) {
  const __m128i even_then_odd = _mm_set_epi8(15, 13, 11, 9, 7, 5, 3, 1, 14, 12, 10, 8, 6, 4, 2, 0);
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(scales, even_then_odd));
}

inline __m256i chunk_scales(__m256i split, int c) {
  return _mm256_shuffle_epi8(split, _mm256_set1_epi16(static_cast<short>((2 * c + 1) << 8 | 2 * c)));
}

// The quants' offset term -32 * sum_j sc_j * bsum_j of a block whose 16 scales are `scales` (int16,
// in order), spread over 8 int32 lanes: -32 * sc fits in int16, so the scales are scaled before
// their one vpmaddwd with the bsums.
template <class Activation>
inline __m256i offset_sum(__m256i scales, const Activation& x) {
  const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums));
  return _mm256_madd_epi16(_mm256_mullo_epi16(scales, _mm256_set1_epi16(-32)), bsums);
}

// The block's integer sum sum_j sc_j * (q - 32) . y, spread over 8 int32 lanes.
inline __m256i block_sum(const BlockQ6K& w, const BlockQ8K& x) {
  const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
  const __m256i split = split_scales(scales);
  __m256i sum = offset_sum(_mm256_cvtepi8_epi16(scales), x);
  for (int half = 0; half < 2; ++half) {
    __m256i q[4];
    unpack_q6k_half(w, half, q);
    for (int k = 0; k < 4; ++k) {
      const int chunk = 4 * half + k;
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 32 * chunk));
      const __m256i products = _mm256_maddubs_epi16(q[k], y);
      sum = add_pair_products(sum, products, chunk_scales(split, chunk));
    }
  }
  return sum;
}

// The same sum for an interleaved block. Vector k's lane pair j holds sub-block 2j + k / 4, so the
// vectors of half 0 meet the even sub-blocks' scales, those of half 1 the odd ones'; two vectors'
// products (each at most 2 * 63 * 128) add as int16 below 2^15.
inline __m256i block_sum(const BlockQ6KInterleaved& w, const BlockQ8KInterleaved& x) {
  // Sub-blocks 0..7 in the low lane, 8..15 in the high one: each pair of scales is then one
  // in-lane word shuffle away.
  const __m256i scales = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales)));
  __m256i sum = offset_sum(scales, x);
  const __m256i scale_pairs[2] = {
      _mm256_shuffle_epi8(scales, _mm256_setr_epi8(0, 1, 0, 1, 4, 5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13, 0, 1, 0, 1, 4,
                                                   5, 4, 5, 8, 9, 8, 9, 12, 13, 12, 13)),
      _mm256_shuffle_epi8(scales, _mm256_setr_epi8(2, 3, 2, 3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15, 2, 3, 2,
                                                   3, 6, 7, 6, 7, 10, 11, 10, 11, 14, 15, 14, 15))};
  for (int half = 0; half < 2; ++half) {
    __m256i q[4];
    unpack_q6k_half(w, half, q);
    for (int k = 0; k < 4; k += 2) {
      const int vector = 4 * half + k;
      const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 32 * vector));
      const __m256i y1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 32 * vector + 32));
      const __m256i run = _mm256_add_epi16(_mm256_maddubs_epi16(q[k], y0), _mm256_maddubs_epi16(q[k + 1], y1));
      sum = add_pair_products(sum, run, scale_pairs[half]);
    }
  }
  return sum;
}

// [sum(v0), sum(v1), sum(v2), sum(v3)], exact.
inline __m128i lane_sums(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
  const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
  return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

template <class Block>
inline float scale(const Block& w, const Q8KBlockFor<Block>& x) {
  return _cvtsh_ss(w.d) * x.d;
}

inline float horizontal_sum(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// The weight side of a block for the token-lane GEMM (dot_kquant_gemm_avx2_impl.hpp), its quants
// in value order (an interleaved block's vectors transposed back).
template <class Block>
inline void unpack_lane_weights(const Block& w, Avx2LaneWeights& out) {
  __m256i halves[2][4];
  unpack_q6k_half(w, 0, halves[0]);
  unpack_q6k_half(w, 1, halves[1]);
  const __m256i q[8] = {halves[0][0], halves[0][1], halves[0][2], halves[0][3],
                        halves[1][0], halves[1][1], halves[1][2], halves[1][3]};
  if constexpr (kInterleavedBlock<Block>) {
    store_in_value_order(q, out.q);
  } else {
    for (int k = 0; k < 8; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(out.q + 32 * k), q[k]);
  }
  const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.scales), lane_scale_operands(_mm256_cvtepi8_epi32(scales)));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.scales + 8),
                     lane_scale_operands(_mm256_cvtepi8_epi32(_mm_srli_si128(scales, 8))));
  const __m256i words = _mm256_cvtepi8_epi16(scales);
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.pairs), words);
  out.d = _cvtsh_ss(w.d);
  out.dmin = 0.0f;
}

// A row of the row kernel (row_lockstep.hpp), four blocks at a time, then the last ones.
template <class Block>
class Q6KRow {
 public:
  Q6KRow(const Block* w, const Q8KBlockFor<Block>* x, std::size_t blocks) : w_(w), x_(x), blocks_(blocks) {}

  using Acc = __m128;

  Acc group(std::size_t b, Acc acc) {
    const Block* const w = w_;
    const Q8KBlockFor<Block>* const x = x_;
    prefetch_weights_ahead<4 * sizeof(Block)>(w + b);
    // One statement per block, in ascending address order: the hardware prefetchers follow an
    // ascending stream (as function arguments the blocks were evaluated last to first).
    // The blocks' sums are paired as they come, so that fewer of them are live at once.
    const __m256i s0 = block_sum(w[b], x[b]);
    const __m256i s01 = _mm256_hadd_epi32(s0, block_sum(w[b + 1], x[b + 1]));
    const __m256i s2 = block_sum(w[b + 2], x[b + 2]);
    const __m256i s23 = _mm256_hadd_epi32(s2, block_sum(w[b + 3], x[b + 3]));
    const __m128 d = _mm_mul_ps(fp16_words_as_floats(w[b].d, w[b + 1].d, w[b + 2].d, w[b + 3].d),
                                _mm_setr_ps(x[b].d, x[b + 1].d, x[b + 2].d, x[b + 3].d));
    const __m256i s = _mm256_hadd_epi32(s01, s23);
    const __m128i sums = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    return _mm_fmadd_ps(d, _mm_cvtepi32_ps(sums), acc);
  }

  float finish(std::size_t b, Acc acc) {
    if (b < blocks_) {
      __m256i sums[4] = {};
      alignas(16) float d[4] = {};
      for (std::size_t i = 0; b + i < blocks_; ++i) {
        sums[i] = block_sum(w_[b + i], x_[b + i]);
        d[i] = scale(w_[b + i], x_[b + i]);
      }
      acc = _mm_fmadd_ps(_mm_load_ps(d), _mm_cvtepi32_ps(lane_sums(sums[0], sums[1], sums[2], sums[3])), acc);
    }
    return horizontal_sum(acc);
  }

 private:
  const Block* w_;
  const Q8KBlockFor<Block>* x_;
  std::size_t blocks_;
};

template <class Block>
inline float dot_q6k_row(const Block* w, const Q8KBlockFor<Block>* x, std::size_t blocks) {
  return walk_row<Q6KRow<Block>>(w, x, blocks);
}

template <class Block>
inline void four_runs_q6k(const Block* const (&starts)[4], std::size_t count, const Q8KBlockFor<Block>* x,
                          std::size_t blocks, float* const (&out)[4]) {
  four_runs_in_lockstep<Q6KRow<Block>>(starts, count, x, blocks, out);
}

template <class Block>
inline void gemm_q6k(const Block* w, std::size_t rows, const Q8KBlockFor<Block>* x, std::size_t tokens,
                     std::size_t blocks, float* out, std::size_t out_stride) {
  dot_tokens_in_lanes_avx2(w, rows, x, tokens, blocks, out, out_stride,
                           [](const Block& block, Avx2LaneWeights& weights) { unpack_lane_weights(block, weights); });
}

}  // namespace
}  // namespace brick::quant::kernels
