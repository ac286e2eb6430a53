#pragma once
// Q8_0·Q8_0 with AVX-512 F/BW + VNNI, on plain blocks and on grouped ones (q8_0_layouts.hpp; the
// same operations, so the same bits): the row kernels (one row, rows, four runs) and a GEMM with 16
// tokens in the lanes, which give the same bits, those of dot_q8_0_block_sums.hpp (every block's
// integer dot exact and scaled once, the blocks of a group of 16 added in a fixed tree).
// - The row kernels compute a group in one zmm, blocks in lanes. vpdpbusd multiplies unsigned by
//   signed bytes, so the weights go in as w + 128 (w ^ 0x80) and each dword starts from -128 * (the
//   sum of its four activation quants), computed once per group for all the rows walked side by side.
//   Two blocks per vpdpbusd; an in-lane transposing reduction leaves the 16 exact block sums in the
//   lanes, in kLaneBlock's order.
// - The GEMM computes each block for 16 tokens at once: the tokens' quants rearranged once per call
//   so that dword k of lane t holds quants 4k..4k+3 of token t, plus 128 (unsigned), times four
//   weight quants broadcast as the signed operand, from -128 * (the sum of the block's weight
//   quants). Its block values are the row kernels' lanes, added in the same tree.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "brick/quant/q8_0.hpp"
#include "core/simd_avx512.hpp"
#include "brick/quant/weight_layout.hpp"
#include "quant/kernels/dot_q8_0_block_sums.hpp"
#include "quant/kernels/dot_rows_avx512_impl.hpp"
#include "quant/kernels/q8_0_layouts.hpp"

namespace brick::quant::kernels {
namespace {

inline __m512i unsigned_bytes(__m512i v) { return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))); }

// The quants of blocks b and b + 1 of a row (only b's when kOne, zeros above).
template <bool kOne>
inline __m512i pair_quants(const BlockQ80* row, std::size_t b) {
  const __m256i first = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[b].qs));
  if constexpr (kOne) return _mm512_zextsi256_si512(first);
  return _mm512_inserti64x4(_mm512_castsi256_si512(first), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row[b + 1].qs)), 1);
}
// A grouped row's pairs lie side by side.
template <bool kOne>
inline __m512i pair_quants(const BlockQ80Group* row, std::size_t b) {
  if constexpr (kOne) return _mm512_zextsi256_si512(_mm256_load_si256(reinterpret_cast<const __m256i*>(quants_of(row, b))));
  return _mm512_loadu_si512(quants_of(row, b));
}

// The d of a whole group's blocks in kLaneBlock's order. Assembled in general registers: on Zen 5
// the row kernels ran 1.26x as fast (rows in L2) as with vpermt2w from the lines the quants' loads
// read (bench/RESULTS.md).
inline __m512 full_group_scales(const BlockQ80* group) {
  return _mm512_cvtph_ps(_mm256_setr_m128i(half_group_scales(group), half_group_scales(group + kGroup / 2)));
}

// The d of the first `n` blocks of the group from block b of a row in kLaneBlock's order (zeros
// past them): for a group's tail, a gather of each block's first dword, of which d is the low half.
inline __m512 group_scales(const BlockQ80* row, std::size_t b, std::size_t n) {
  const BlockQ80* group = row + b;
  if (n == kGroup) return full_group_scales(group);
  const __m512i lane_block = _mm512_set_epi32(15, 13, 11, 9, 14, 12, 10, 8, 7, 5, 3, 1, 6, 4, 2, 0);
  const __mmask16 present = _mm512_cmplt_epi32_mask(lane_block, _mm512_set1_epi32(static_cast<int>(n)));
  const __m512i offsets = _mm512_mullo_epi32(lane_block, _mm512_set1_epi32(static_cast<int>(sizeof(BlockQ80))));
  const __m512i dwords = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), present, offsets, group, 1);
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dwords));
}
// A grouped group's, always whole: its 16 d's side by side, permuted into order.
inline __m512 group_scales(const BlockQ80Group* row, std::size_t b, std::size_t) {
  const __m512i lane_block = _mm512_set_epi32(15, 13, 11, 9, 14, 12, 10, 8, 7, 5, 3, 1, 6, 4, 2, 0);
  const __m256i words = _mm256_load_si256(reinterpret_cast<const __m256i*>(row[b / kGroup].d));
  return _mm512_permutexvar_ps(lane_block, _mm512_cvtph_ps(words));
}

// The activation side of one group of n <= 16 blocks: per pair of blocks the quants and the
// dwords' starting values, and the scales in lane order.
struct GroupActivation {
  __m512i qs[kGroup / 2];
  __m512i start[kGroup / 2];  // -128 * the sum of each four quants
  __m512 d;
};

// Of the group from block b of x.
template <class Block>
inline GroupActivation group_activation(const Block* x, std::size_t b, std::size_t n) {
  GroupActivation a;
  for (std::size_t p = 0; p < kGroup / 2; ++p) {
    if (2 * p + 1 < n) {
      a.qs[p] = pair_quants<false>(x, b + 2 * p);
    } else if (2 * p < n) {
      a.qs[p] = pair_quants<true>(x, b + 2 * p);
    } else {
      a.qs[p] = _mm512_setzero_si512();
    }
    const __m512i sums = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_set1_epi8(static_cast<char>(0x80)), a.qs[p]);
    a.start[p] = _mm512_sub_epi32(_mm512_setzero_si512(), sums);
  }
  a.d = group_scales(x, b, n);
  return a;
}

// [a0+a2, b0+b2, a1+a3, b1+b3] in each 128-bit lane of dword partial sums a and b.
inline __m512i merge_dwords(__m512i a, __m512i b) {
  return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
}
// The dword pairs of two merge_dwords results added: each 128-bit lane then holds four whole sums.
inline __m512i merge_qwords(__m512i a, __m512i b) {
  return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

// t_b of the blocks of the group from block b of row w in kLaneBlock's order.
template <class Block>
inline __m512 group_values(const Block* w, std::size_t b, const GroupActivation& a, std::size_t n) {
  __m512i partial[kGroup / 2];
  for (std::size_t p = 0; p < kGroup / 2; ++p) {
    if (2 * p + 1 < n) {
      partial[p] = _mm512_dpbusd_epi32(a.start[p], unsigned_bytes(pair_quants<false>(w, b + 2 * p)), a.qs[p]);
    } else if (2 * p < n) {
      partial[p] = _mm512_dpbusd_epi32(a.start[p], unsigned_bytes(pair_quants<true>(w, b + 2 * p)), a.qs[p]);
    } else {
      partial[p] = _mm512_setzero_si512();
    }
  }
  // 128-bit lane L of e: the sums of lane L of partial[0..3]; f: of partial[4..7]. Lanes 0 + 1 of a
  // partial are its first block, 2 + 3 its second.
  const __m512i e = merge_qwords(merge_dwords(partial[0], partial[1]), merge_dwords(partial[2], partial[3]));
  const __m512i f = merge_qwords(merge_dwords(partial[4], partial[5]), merge_dwords(partial[6], partial[7]));
  const __m512i sums = _mm512_add_epi32(_mm512_shuffle_i32x4(e, f, _MM_SHUFFLE(2, 0, 2, 0)),
                                        _mm512_shuffle_i32x4(e, f, _MM_SHUFFLE(3, 1, 3, 1)));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(group_scales(w, b, n), a.d));
}

// The group tree: lanes j + (j + 8), then + 4, + 2, + 1.
inline __m128 group_sum(__m512 t) {
  const __m256 u = _mm256_add_ps(_mm512_castps512_ps256(t), _mm512_extractf32x8_ps(t, 1));
  const __m128 v = _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
  const __m128 c = _mm_add_ps(v, _mm_movehl_ps(v, v));
  return _mm_add_ss(c, _mm_movehdup_ps(c));
}

// group_sum of four rows' values at once, one row per lane of the result: the same additions with
// the same operands, the rows side by side in 128-bit lanes.
inline __m128 group_sums(const __m512 (&t)[4]) {
  const __m512 u01 = _mm512_add_ps(_mm512_shuffle_f32x4(t[0], t[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_f32x4(t[0], t[1], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 u23 = _mm512_add_ps(_mm512_shuffle_f32x4(t[2], t[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_f32x4(t[2], t[3], _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 v = _mm512_add_ps(_mm512_shuffle_f32x4(u01, u23, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_f32x4(u01, u23, _MM_SHUFFLE(3, 1, 3, 1)));
  const __m512 c = _mm512_add_ps(v, _mm512_permute_ps(v, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 g = _mm512_add_ps(c, _mm512_movehdup_ps(c));
  return _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0), g));
}

struct Q80DotVnni {
  // R rows of `blocks` blocks side by side: each group's activation side computed once for all of
  // them.
  template <class Block, std::size_t R>
  void side_by_side(const Block* const (&rows)[R], const Block* x, std::size_t blocks, float* const (&out)[R]) const {
    __m128 sums[R];
    for (std::size_t r = 0; r < R; ++r) sums[r] = _mm_setzero_ps();
    __m128 four = _mm_setzero_ps();  // R = 4: the rows' sums of whole groups, one per lane
    std::size_t b = 0;
    for (; b + kGroup <= blocks; b += kGroup) {
      for (std::size_t r = 0; r < R; ++r) {
        const char* ahead = reinterpret_cast<const char*>(quants_of(rows[r], b)) + kPrefetchAhead;
        for (std::size_t line = 0; line < kGroup * sizeof(BlockQ80); line += 64) _mm_prefetch(ahead + line, _MM_HINT_T0);
      }
      const GroupActivation a = group_activation(x, b, kGroup);
      if constexpr (R == 4) {
        const __m512 t[4] = {group_values(rows[0], b, a, kGroup), group_values(rows[1], b, a, kGroup),
                             group_values(rows[2], b, a, kGroup), group_values(rows[3], b, a, kGroup)};
        four = _mm_add_ps(four, group_sums(t));
      } else {
        for (std::size_t r = 0; r < R; ++r) sums[r] = _mm_add_ss(sums[r], group_sum(group_values(rows[r], b, a, kGroup)));
      }
    }
    if constexpr (R == 4) {
      alignas(16) float lanes[4];
      _mm_store_ps(lanes, four);
      for (std::size_t r = 0; r < R; ++r) sums[r] = _mm_set_ss(lanes[r]);
    }
    if constexpr (std::is_same_v<Block, BlockQ80>) {
      if (b < blocks) {
        const GroupActivation a = group_activation(x, b, blocks - b);
        for (std::size_t r = 0; r < R; ++r) {
          sums[r] = _mm_add_ss(sums[r], group_sum(group_values(rows[r], b, a, blocks - b)));
        }
      }
    }
    for (std::size_t r = 0; r < R; ++r) *out[r] = _mm_cvtss_f32(sums[r]);
  }
};

// One block of up to 16 tokens, rearranged (lanes past the tile's tokens hold garbage that no
// output takes). A tile holds each group's blocks in kVisitBlock's order.
struct alignas(64) TokenLaneBlock {
  __m512i qx[kQ80BlockSize / 4];  // dword k, lane t: quants 4k..4k+3 of token t, + 128 (uint8)
  __m512 d;                       // lane t: token t's d
};

// Token t's block b lies t * blocks * sizeof(BlockQ80) bytes after token 0's in either layout.
template <class Block>
inline void rearrange_tokens(const Block* x, std::size_t n, std::size_t blocks, TokenLaneBlock* tile) {
  const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
  const __m512i offsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                             _mm512_set1_epi32(static_cast<int>(blocks * sizeof(BlockQ80))));
  const __m512i zero = _mm512_setzero_si512();
  for (std::size_t g = 0; g < blocks; g += kGroup) {
    for (std::size_t i = 0; i < kGroup; ++i) {
      const std::size_t b = g + static_cast<std::size_t>(kVisitBlock[i]);
      if (b >= blocks) continue;
      TokenLaneBlock& out = tile[g + i];
      for (std::size_t k = 0; k < kQ80BlockSize / 4; ++k) {
        out.qx[k] = unsigned_bytes(_mm512_mask_i32gather_epi32(zero, lanes, offsets, quants_of(x, b) + 4 * k, 1));
      }
      // The dword at d: d in its low half.
      out.d = _mm512_cvtph_ps(
          _mm512_cvtepi32_epi16(_mm512_mask_i32gather_epi32(zero, lanes, offsets, &scale_of(x, b), 1)));
    }
  }
}

// t_b for R rows (rows[r] at block b, with their terms) and the tile's tokens, each weight dword
// broadcast from memory; the block's two halves in separate chains of vpdpbusd, added as integers.
// Always inlined, as is the GEMM's lambda around it: GCC left one of a group's 16 blocks out of line
// for grouped rows, its zmm results returned through memory, and the grouped GEMM ran 4-10% slower
// than the plain one.
template <std::size_t R, class Block>
[[gnu::always_inline]] inline RowLanes<__v16sf, R> block_values(const Block* const (&rows)[R],
                                                                 const BlockTerms* const (&terms)[R], std::size_t b,
                                                                 const TokenLaneBlock& x) {
  constexpr std::size_t kHalf = kQ80BlockSize / 8;
  __m512i low[R];
  __m512i high[R];
  for (std::size_t r = 0; r < R; ++r) {
    low[r] = _mm512_set1_epi32(terms[r][b].start);
    high[r] = _mm512_setzero_si512();
  }
  for (std::size_t k = 0; k < kHalf; ++k) {
    const __m512i first = _mm512_load_si512(&x.qx[k]);
    const __m512i second = _mm512_load_si512(&x.qx[kHalf + k]);
    for (std::size_t r = 0; r < R; ++r) {
      low[r] = _mm512_dpbusd_epi32(low[r], first, _mm512_broadcastd_epi32(_mm_loadu_si32(quants_of(rows[r], b) + 4 * k)));
      high[r] = _mm512_dpbusd_epi32(high[r], second, _mm512_broadcastd_epi32(_mm_loadu_si32(quants_of(rows[r], b) + 4 * (kHalf + k))));
    }
  }
  RowLanes<__v16sf, R> t;
  for (std::size_t r = 0; r < R; ++r) {
    const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(terms[r][b].d), x.d);
    t.v[r] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(low[r], high[r])), scale);
  }
  return t;
}

// The GEMM over rows of `blocks` Q8_0 blocks in either layout.
template <class Block>
inline void gemm_vnni(const Block* w, std::size_t rows, const Block* x, std::size_t tokens, std::size_t blocks,
                      float* out, std::size_t out_stride) {
  // Four rows at a time: on an Intel Xeon 1.04-1.25x as fast as two.
  gemm_in_tiles<TokenLaneBlock, kGroup, 4>(
      w, rows, x, tokens, blocks, out, out_stride, rearrange_tokens<Block>,
      [&]<std::size_t R>(std::integral_constant<std::size_t, R>, const Block* rows_w, const BlockTerms* terms,
                         const TokenLaneBlock* tile, std::size_t n, float* tile_out, NextChunkPrefetch& next) {
        lane_rows<__v16sf, R>(rows_w, terms, blocks, tile, n, tile_out, out_stride, next,
                             [](const Block* const (&rows)[R], const BlockTerms* const (&row_terms)[R],
                                std::size_t b, const TokenLaneBlock& x) __attribute__((always_inline)) {
                               return block_values<R>(rows, row_terms, b, x);
                             });
      });
}

}  // namespace
}  // namespace brick::quant::kernels
