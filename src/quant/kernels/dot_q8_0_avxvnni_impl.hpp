#pragma once
// Q8_0·Q8_0 with AVX2 + AVX-VNNI (vpdpbusd on ymm), on plain blocks and on grouped ones
// (q8_0_layouts.hpp; the same operations, so the same bits): the row kernels (one row, rows, four
// runs) and a GEMM with 8 tokens in the lanes. They give the bits of the AVX-512 VNNI kernels, those of
// dot_q8_0_block_sums.hpp (every block's integer dot exact and scaled once, the blocks of a group
// of 16 added in a fixed tree), in half-width vectors:
// - The row kernels compute a block per vpdpbusd: the weights go in as w + 128 (w ^ 0x80), the
//   activations as the signed operand, and each dword starts from -128 * (the sum of its four
//   activation quants), computed once per group for all the rows walked side by side (for grouped
//   rows, once per call for all the rows, walked one after another). A transposing
//   reduction leaves eight exact block sums in a ymm, a group's two halves in kLaneBlock's order.
// - The GEMM computes each block for 8 tokens at once, as the AVX-512 one does for 16: dword k of
//   lane t holds quants 4k..4k+3 of token t plus 128, rearranged once per call, times four weight
//   quants broadcast, from -128 * (the sum of the block's weight quants).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "brick/quant/q8_0.hpp"
#include "quant/kernels/dot_q8_0_block_sums.hpp"
#include "quant/kernels/dot_rows_in_runs.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kHalf = kGroup / 2;

template <class Block>
inline __m256i load_quants(const Block* row, std::size_t b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(quants_of(row, b)));
}

inline __m256i unsigned_bytes(__m256i v) {
  return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80)));
}

// The fp16 words in the low halves of eight dwords, as floats.
inline __m256 low_halves_as_floats(__m256i dwords) {
  const __m256i words = _mm256_shuffle_epi8(
      dwords, _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5,
                               8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
  return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(words, 0x08)));
}

// The d of a half group's blocks in kLaneBlock's order (half[kLaneBlock[j]] in lane j), of the
// first `n` of its blocks (zeros past them): a whole half's from half_group_scales (1.3x as fast
// on Zen 5 as a gather of the eight), a shorter one's by a gather of each block's first dword, of
// which d is the low half.
inline __m256 half_scales(const BlockQ80* half, std::size_t n) {
  if (n >= kHalf) return _mm256_cvtph_ps(half_group_scales(half));
  const __m256i lane_block = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m256i offsets =
      _mm256_mullo_epi32(lane_block, _mm256_set1_epi32(static_cast<int>(sizeof(BlockQ80))));
  const __m256i present = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane_block);
  return low_halves_as_floats(_mm256_mask_i32gather_epi32(_mm256_setzero_si256(),
                                                          reinterpret_cast<const int*>(half), offsets,
                                                          present, 1));
}

// The d of a group's first `n` blocks, its halves in kLaneBlock's order.
struct GroupScales {
  __m256 half[2];
};

inline GroupScales group_scales(const BlockQ80* group, std::size_t n) {
  return {half_scales(group, n),
          n > kHalf ? half_scales(group + kHalf, n - kHalf) : _mm256_setzero_ps()};
}
// A grouped group's, always whole: each half's eight words side by side, shuffled into order.
inline GroupScales group_scales(const BlockQ80Group* group, std::size_t) {
  static_assert(kLaneBlock[1] == 2 && kLaneBlock[3] == 6 && kLaneBlock[4] == 1 && kLaneBlock[7] == 7);
  const __m128i order = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
  const auto half = [&](std::size_t h) {
    const __m128i words = _mm_loadu_si128(reinterpret_cast<const __m128i*>(group->d + kHalf * h));
    return _mm256_cvtph_ps(_mm_shuffle_epi8(words, order));
  };
  return {half(0), half(1)};
}

// The activation side of one group of n <= 16 blocks: each block's dwords' starting values, and the
// scales.
struct GroupActivation {
  __m256i start[kGroup];  // -128 * the sum of each four quants
  GroupScales d;
};

template <class Block>
inline GroupActivation group_activation(const Block* x, std::size_t n) {
  GroupActivation a;
  for (std::size_t b = 0; b < kGroup; ++b) {
    if (b >= n) {
      a.start[b] = _mm256_setzero_si256();
      continue;
    }
    const __m256i sums = _mm256_dpbusd_avx_epi32(
        _mm256_setzero_si256(), _mm256_set1_epi8(static_cast<char>(0x80)), load_quants(x, b));
    a.start[b] = _mm256_sub_epi32(_mm256_setzero_si256(), sums);
  }
  a.d = group_scales(x, n);
  return a;
}

// [a0+a2, b0+b2, a1+a3, b1+b3] in each 128-bit lane of dword partial sums a and b.
inline __m256i merge_dwords(__m256i a, __m256i b) {
  return _mm256_add_epi32(_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b));
}
// The dword pairs of two merge_dwords results added: each 128-bit lane then holds four whole sums.
inline __m256i merge_qwords(__m256i a, __m256i b) {
  return _mm256_add_epi32(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
}

// The exact block sums of the half group of blocks first.. of w and x against its activation side
// `start`, in kLaneBlock's order, of its first `n` blocks (zeros past them).
template <class Block>
inline __m256i half_sums(const Block* w, const __m256i* start, const Block* x, std::size_t first,
                         std::size_t n) {
  __m256i partial[kHalf];
  for (std::size_t j = 0; j < kHalf; ++j) {
    const auto b = static_cast<std::size_t>(kLaneBlock[j]);
    partial[j] = b < n ? _mm256_dpbusd_avx_epi32(start[b], unsigned_bytes(load_quants(w, first + b)),
                                                 load_quants(x, first + b))
                       : _mm256_setzero_si256();
  }
  // 128-bit lane L of e: the sums of lane L of partial[0..3]; f: of partial[4..7].
  const __m256i e =
      merge_qwords(merge_dwords(partial[0], partial[1]), merge_dwords(partial[2], partial[3]));
  const __m256i f =
      merge_qwords(merge_dwords(partial[4], partial[5]), merge_dwords(partial[6], partial[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(e, f, 0x20),
                          _mm256_permute2x128_si256(e, f, 0x31));
}

// The group's tree over t_b of one row, from the halves' values in kLaneBlock's order: lanes
// j + (j + 8), then + 4, + 2, + 1.
template <class Block>
inline __m128 group_sum(const Block* w, const Block* x, const GroupActivation& a, std::size_t n) {
  const GroupScales dw = group_scales(w, n);
  const __m256 first = _mm256_mul_ps(_mm256_cvtepi32_ps(half_sums(w, a.start, x, 0, n)),
                                     _mm256_mul_ps(dw.half[0], a.d.half[0]));
  const __m256 second =
      n > kHalf
          ? _mm256_mul_ps(_mm256_cvtepi32_ps(half_sums(w, a.start + kHalf, x, kHalf, n - kHalf)),
                          _mm256_mul_ps(dw.half[1], a.d.half[1]))
          : _mm256_setzero_ps();
  const __m256 u = _mm256_add_ps(first, second);
  const __m128 v = _mm_add_ps(_mm256_castps256_ps128(u), _mm256_extractf128_ps(u, 1));
  const __m128 c = _mm_add_ps(v, _mm_movehl_ps(v, v));
  return _mm_add_ss(c, _mm_movehdup_ps(c));
}

struct Q80DotVnni {
  // R rows side by side: each group's activation side computed once for all of them.
  template <std::size_t R>
  void side_by_side(const BlockQ80* const (&rows)[R], const BlockQ80* x, std::size_t blocks,
                    float* const (&out)[R]) const {
    __m128 sums[R];
    for (std::size_t r = 0; r < R; ++r) sums[r] = _mm_setzero_ps();
    std::size_t b = 0;
    for (; b + kGroup <= blocks; b += kGroup) {
      for (std::size_t r = 0; r < R; ++r)
        prefetch_weights_ahead<kGroup * sizeof(BlockQ80)>(rows[r] + b);
      const GroupActivation a = group_activation(x + b, kGroup);
      for (std::size_t r = 0; r < R; ++r)
        sums[r] = _mm_add_ss(sums[r], group_sum(rows[r] + b, x + b, a, kGroup));
    }
    if (b < blocks) {
      const GroupActivation a = group_activation(x + b, blocks - b);
      for (std::size_t r = 0; r < R; ++r)
        sums[r] = _mm_add_ss(sums[r], group_sum(rows[r] + b, x + b, a, blocks - b));
    }
    for (std::size_t r = 0; r < R; ++r) *out[r] = _mm_cvtss_f32(sums[r]);
  }

  // The same on rows of `groups` grouped blocks, every group whole.
  template <std::size_t R>
  void side_by_side(const BlockQ80Group* const (&rows)[R], const BlockQ80Group* x, std::size_t groups,
                    float* const (&out)[R]) const {
    __m128 sums[R];
    for (std::size_t r = 0; r < R; ++r) sums[r] = _mm_setzero_ps();
    for (std::size_t g = 0; g < groups; ++g) {
      for (std::size_t r = 0; r < R; ++r) prefetch_weights_ahead<sizeof(BlockQ80Group)>(rows[r] + g);
      const GroupActivation a = group_activation(x + g, kGroup);
      for (std::size_t r = 0; r < R; ++r) sums[r] = _mm_add_ss(sums[r], group_sum(rows[r] + g, x + g, a, kGroup));
    }
    for (std::size_t r = 0; r < R; ++r) *out[r] = _mm_cvtss_f32(sums[r]);
  }
};

template <class Kernel, class Weight, class Activation, std::size_t R>
void dot_side_by_side(const Kernel& kernel, const Weight* const (&rows)[R], const Activation* x,
                      std::size_t blocks, float* const (&out)[R]) {
  kernel.side_by_side(rows, x, blocks, out);
}

// Rows of grouped blocks one after another, the activation side of up to kSharedGroups groups
// computed once for all of them; a longer row's sum goes on from out[r] chunk by chunk, the same
// additions in the same order, so the one-row kernel's bits.
inline constexpr std::size_t kSharedGroups = 32;  // 16384 values, 18 KiB of activation side

inline void grouped_rows_sharing_activation(const BlockQ80Group* w, std::size_t rows,
                                            const BlockQ80Group* x, std::size_t groups, float* out) {
  GroupActivation shared[kSharedGroups];
  for (std::size_t first = 0; first < groups; first += kSharedGroups) {
    const std::size_t n = groups - first < kSharedGroups ? groups - first : kSharedGroups;
    for (std::size_t g = 0; g < n; ++g) shared[g] = group_activation(x + first + g, kGroup);
    for (std::size_t r = 0; r < rows; ++r) {
      const BlockQ80Group* row = w + r * groups + first;
      __m128 sum = first == 0 ? _mm_setzero_ps() : _mm_set_ss(out[r]);
      for (std::size_t g = 0; g < n; ++g) {
        prefetch_weights_ahead<sizeof(BlockQ80Group)>(row + g);
        sum = _mm_add_ss(sum, group_sum(row + g, x + first + g, shared[g], kGroup));
      }
      out[r] = _mm_cvtss_f32(sum);
    }
  }
}

inline constexpr std::size_t kTileTokens = 8;

// One block of up to 8 tokens, rearranged (lanes past the tile's tokens hold zeros that no output
// takes). A tile holds each group's blocks in kVisitBlock's order.
struct alignas(32) TokenLaneBlock {
  __m256i qx[kQ80BlockSize / 4];  // dword k, lane t: quants 4k..4k+3 of token t, + 128 (uint8)
  __m256 d;                       // lane t: token t's d
};

// Token t's block b lies t * blocks * sizeof(BlockQ80) bytes after token 0's in either layout.
template <class Block>
inline void rearrange_tokens(const Block* x, std::size_t n, std::size_t blocks, TokenLaneBlock* tile) {
  const __m256i token = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i present = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), token);
  const __m256i offsets =
      _mm256_mullo_epi32(token, _mm256_set1_epi32(static_cast<int>(blocks * sizeof(BlockQ80))));
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t g = 0; g < blocks; g += kGroup) {
    for (std::size_t i = 0; i < kGroup; ++i) {
      const std::size_t b = g + static_cast<std::size_t>(kVisitBlock[i]);
      if (b >= blocks) continue;
      TokenLaneBlock& out = tile[g + i];
      for (std::size_t k = 0; k < kQ80BlockSize / 4; ++k) {
        const int* quants = reinterpret_cast<const int*>(quants_of(x, b) + 4 * k);
        out.qx[k] = unsigned_bytes(_mm256_mask_i32gather_epi32(zero, quants, offsets, present, 1));
      }
      // The dword at d: d in its low half.
      out.d = low_halves_as_floats(_mm256_mask_i32gather_epi32(
          zero, reinterpret_cast<const int*>(&scale_of(x, b)), offsets, present, 1));
    }
  }
}

// t_b for R rows (rows[r] at block b, with their terms) and the tile's tokens, each weight dword
// broadcast from memory; the block's two halves in separate chains of vpdpbusd, added as integers.
// Always inlined, as is the GEMM's lambda around it: GCC left one of a group's 16 blocks out of line
// for grouped rows, its ymm results returned through memory (as in dot_q8_0_avx512vnni_impl.hpp).
template <std::size_t R, class Block>
[[gnu::always_inline]] inline RowLanes<__v8sf, R> block_values(const Block* const (&rows)[R],
                                        const BlockTerms* const (&terms)[R], std::size_t b,
                                        const TokenLaneBlock& x) {
  constexpr std::size_t kSteps = kQ80BlockSize / 8;
  __m256i low[R];
  __m256i high[R];
  for (std::size_t r = 0; r < R; ++r) {
    low[r] = _mm256_set1_epi32(terms[r][b].start);
    high[r] = _mm256_setzero_si256();
  }
  for (std::size_t k = 0; k < kSteps; ++k) {
    const __m256i first = _mm256_load_si256(&x.qx[k]);
    const __m256i second = _mm256_load_si256(&x.qx[kSteps + k]);
    for (std::size_t r = 0; r < R; ++r) {
      low[r] = _mm256_dpbusd_avx_epi32(
          low[r], first, _mm256_broadcastd_epi32(_mm_loadu_si32(quants_of(rows[r], b) + 4 * k)));
      high[r] = _mm256_dpbusd_avx_epi32(
          high[r], second,
          _mm256_broadcastd_epi32(_mm_loadu_si32(quants_of(rows[r], b) + 4 * (kSteps + k))));
    }
  }
  RowLanes<__v8sf, R> t;
  for (std::size_t r = 0; r < R; ++r) {
    const __m256 scale = _mm256_mul_ps(_mm256_set1_ps(terms[r][b].d), x.d);
    t.v[r] = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(low[r], high[r])), scale);
  }
  return t;
}

// The GEMM over rows of `blocks` Q8_0 blocks in either layout.
template <class Block>
inline void gemm_vnni(const Block* w, std::size_t rows, const Block* x, std::size_t tokens, std::size_t blocks,
                      float* out, std::size_t out_stride) {
  // Two rows at a time: four ran at 0.80-0.87x in its 16 ymm registers.
  gemm_in_tiles<TokenLaneBlock, kTileTokens, 2>(
      w, rows, x, tokens, blocks, out, out_stride, rearrange_tokens<Block>,
      [&]<std::size_t R>(std::integral_constant<std::size_t, R>, const Block* rows_w, const BlockTerms* terms,
                         const TokenLaneBlock* tile, std::size_t n, float* tile_out, NextChunkPrefetch& next) {
        lane_rows<__v8sf, R>(rows_w, terms, blocks, tile, n, tile_out, out_stride, next,
                             [](const Block* const (&rows)[R], const BlockTerms* const (&row_terms)[R], std::size_t b,
                                const TokenLaneBlock& x) __attribute__((always_inline)) {
                               return block_values<R>(rows, row_terms, b, x);
                             });
      });
}

}  // namespace
}  // namespace brick::quant::kernels
