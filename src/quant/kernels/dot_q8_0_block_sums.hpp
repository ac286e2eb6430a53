#pragma once
// What the VNNI Q8_0 kernels share, in zmm (dot_q8_0_q8_0_avx512vnni.cpp) and in ymm
// (dot_q8_0_q8_0_avxvnni.cpp), which give the same bits: every block's integer dot s_b exact,
// scaled once, t_b = float(s_b) * (d_w * d_x); a row's blocks added in groups of 16, within a group
// in a fixed tree (lanes j and j + 8 of kLaneBlock's order first, then j and j + 4, j and j + 2,
// j and j + 1; missing blocks as +0), and the group sums in order from 0.
//
// Here: the group's orders, the tree as the GEMMs walk it, the weight blocks' terms and the GEMM's
// walk over chunks of rows and tiles of tokens, on plain or grouped blocks (q8_0_layouts.hpp).
// Everything here is in an anonymous namespace so that each translation unit keeps its own copy,
// compiled with its own flags (AVX2 at least).
#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "brick/quant/q8_0.hpp"
#include "quant/kernels/q8_0_layouts.hpp"
#include "quant/kernels/q8_0_scales.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kGroup = 16;
// The block of its group each lane holds after the row kernels' transposing reductions.
inline constexpr int kLaneBlock[kGroup] = {0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15};
// The GEMMs' order of a group's blocks: the lanes in the order the tree adds them (0, 8, 4, 12, 2,
// 10, 6, 14, 1, ...), so that each addition takes the two values computed last at its level.
inline constexpr int kVisitBlock[kGroup] = {0, 8, 1, 9, 4, 12, 5, 13, 2, 10, 3, 11, 6, 14, 7, 15};

// One float vector of V per row, R rows.
template <class V, std::size_t R>
struct RowLanes {
  V v[R];
};

template <class V, std::size_t R>
inline RowLanes<V, R> operator+(const RowLanes<V, R>& a, const RowLanes<V, R>& b) {
  RowLanes<V, R> sum;
  for (std::size_t r = 0; r < R; ++r) sum.v[r] = a.v[r] + b.v[r];
  return sum;
}

// The tree over a group's 16 values, value(std::integral_constant<I>) giving the I-th in
// kVisitBlock's order, as a binary counter: after the i-th value, level l holds the sum of the last
// 2^l values whenever bit l of i + 1 is set. Unrolled at compile time, so that the levels stay in
// registers.
template <class Lanes, class Value>
inline Lanes group_tree(const Value& value) {
  Lanes levels[5];
  const auto visit = [&]<std::size_t I>(std::integral_constant<std::size_t, I> index) {
    Lanes sum = value(index);
    constexpr int kCarries = std::countr_one(I);
    for (int level = 0; level < kCarries; ++level) sum = levels[level] + sum;
    levels[kCarries] = sum;
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (visit(std::integral_constant<std::size_t, I>{}), ...);
  }
  (std::make_index_sequence<kGroup>{});
  return levels[4];
}

// The d of eight blocks h[0..7], a half group, as fp16 words in kLaneBlock's order (h[kLaneBlock[j]]
// in word j), assembled four at a time (q8_0_scales.hpp).
inline __m128i half_group_scales(const BlockQ80* h) {
  static_assert(kLaneBlock[0] == 0 && kLaneBlock[1] == 2 && kLaneBlock[4] == 1 && kLaneBlock[8] == 8);
  return _mm_unpacklo_epi64(four_scales(h[0], h[2], h[4], h[6]), four_scales(h[1], h[3], h[5], h[7]));
}

// What the GEMMs need of a weight block besides its quants, computed once per chunk of rows for all
// the tiles of tokens: -128 * the sum of its quants (vpsadbw sums the unsigned bytes w + 128 eight
// at a time), and d as a float.
struct BlockTerms {
  std::int32_t start;
  float d;
};

inline BlockTerms block_terms(const std::int8_t* qs, fp16_t d) {
  const __m256i bytes = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs)),
                                         _mm256_set1_epi8(static_cast<char>(0x80)));
  const __m256i sums = _mm256_sad_epu8(bytes, _mm256_setzero_si256());
  __m128i total = _mm_add_epi64(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
  total = _mm_add_epi64(total, _mm_unpackhi_epi64(total, total));
  return {-128 * (_mm_cvtsi128_si32(total) - 128 * static_cast<int>(kQ80BlockSize)), _cvtsh_ss(d)};
}

// R rows from w (their terms from `terms`) against a tile's n tokens, one per float lane of V:
// block_values(rows, row_terms, i, tile block) gives t_b for the R rows (rows and terms from their
// group's first block on, b that group's block i), and the groups' trees add them (blocks past the
// row's last as +0, as in the row kernels' lanes); out[t * out_stride + r] for t < n. next.step()
// once per group.
template <class V, std::size_t R, class Block, class Tile, class BlockValues>
inline void lane_rows(const Block* w, const BlockTerms* terms, std::size_t blocks, const Tile* tile,
                      std::size_t n, float* out, std::size_t out_stride, NextChunkPrefetch& next,
                      const BlockValues& block_values) {
  constexpr std::size_t kLanes = sizeof(V) / sizeof(float);
  const Block* rows[R];
  const BlockTerms* row_terms[R];
  for (std::size_t r = 0; r < R; ++r) {
    rows[r] = row_at(w, r, blocks);
    row_terms[r] = terms + r * blocks;
  }
  RowLanes<V, R> acc{};
  for (std::size_t g = 0; g < blocks; g += kGroup) {
    next.step();
    // The group's rows and terms from its first block, so that each block's place is a constant
    // offset in either layout (no b / 16, b % 16 per block of a grouped row).
    const Block* group_rows[R];
    const BlockTerms* group_terms[R];
    for (std::size_t r = 0; r < R; ++r) {
      group_rows[r] = from_group(rows[r], g);
      group_terms[r] = row_terms[r] + g;
    }
    acc = acc + group_tree<RowLanes<V, R>>([&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      constexpr auto kBlock = static_cast<std::size_t>(kVisitBlock[I]);
      if (g + kBlock < blocks) return block_values(group_rows, group_terms, kBlock, tile[g + I]);
      return RowLanes<V, R>{};
    });
  }
  for (std::size_t r = 0; r < R; ++r) {
    float sums[kLanes];
    std::memcpy(sums, &acc.v[r], sizeof sums);
    for (std::size_t t = 0; t < n; ++t) out[t * out_stride + r] = sums[t];
  }
}

// About this many bytes of weight rows are walked against every tile of tokens before the next
// rows: they stay in L2 while the tiles stream past.
inline constexpr std::size_t kChunkBytes = 128 * 1024;

// The GEMM's walk: every tile of kTile tokens rearranged once into the calling thread's buffer of
// Tile blocks (rearrange(x, n, blocks, tile), each group's blocks in kVisitBlock's order); then
// chunks of rows (a multiple of kRows), their blocks' terms computed once, each chunk against every
// tile, kRows rows at a time (sharing the activation loads; 4 or 2): lane_rows(
// std::integral_constant<R>, w, terms, tile, n, out, next) for R = kRows, then 2 and a last 1,
// writing out[t * out_stride + r] for the tile's t < n and calling next.step() once per group, which
// prefetches a slice of the next chunk's rows.
template <class Tile, std::size_t kTile, std::size_t kRows, class Block, class Rearrange, class LaneRows>
inline void gemm_in_tiles(const Block* w, std::size_t rows, const Block* x,
                          std::size_t tokens, std::size_t blocks, float* out,
                          std::size_t out_stride, const Rearrange& rearrange,
                          const LaneRows& lane_rows) {
  thread_local std::vector<Tile> tiles;
  thread_local std::vector<BlockTerms> terms;
  const std::size_t tile_groups = (blocks + kGroup - 1) / kGroup;
  const std::size_t tile_blocks = tile_groups * kGroup;
  const std::size_t tile_count = (tokens + kTile - 1) / kTile;
  if (tiles.size() < tile_count * tile_blocks) tiles.resize(tile_count * tile_blocks);
  for (std::size_t t = 0; t < tile_count; ++t) {
    rearrange(row_at(x, t * kTile, blocks), std::min(kTile, tokens - t * kTile), blocks,
              tiles.data() + t * tile_blocks);
  }
  const std::size_t chunk =
      std::max<std::size_t>(kRows, kChunkBytes / (blocks * sizeof(BlockQ80)) / kRows * kRows);
  if (terms.size() < chunk * blocks) terms.resize(chunk * blocks);
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = std::min(chunk, rows - first_row);
    const Block* const chunk_w = row_at(w, first_row, blocks);
    for (std::size_t i = 0; i < chunk_rows * blocks; ++i) {
      terms[i] = block_terms(quants_of(chunk_w, i), scale_of(chunk_w, i));
    }
    const std::size_t next_rows = std::min(chunk, rows - first_row - chunk_rows);
    NextChunkPrefetch next(row_at(chunk_w, chunk_rows, blocks), next_rows * blocks * sizeof(BlockQ80),
                           tile_count * (chunk_rows / kRows + chunk_rows % kRows / 2 + chunk_rows % 2) * tile_groups);
    for (std::size_t t = 0; t < tile_count; ++t) {
      const Tile* const tile = tiles.data() + t * tile_blocks;
      const std::size_t n = std::min(kTile, tokens - t * kTile);
      float* const tile_out = out + t * kTile * out_stride + first_row;
      std::size_t r = 0;
      if constexpr (kRows > 2) {
        for (; r + kRows <= chunk_rows; r += kRows) {
          lane_rows(std::integral_constant<std::size_t, kRows>{}, row_at(chunk_w, r, blocks),
                    terms.data() + r * blocks, tile, n, tile_out + r, next);
        }
      }
      for (; r + 2 <= chunk_rows; r += 2) {
        lane_rows(std::integral_constant<std::size_t, 2>{}, row_at(chunk_w, r, blocks),
                  terms.data() + r * blocks, tile, n, tile_out + r, next);
      }
      if (r < chunk_rows) {
        lane_rows(std::integral_constant<std::size_t, 1>{}, row_at(chunk_w, r, blocks),
                  terms.data() + r * blocks, tile, n, tile_out + r, next);
      }
    }
  }
}

}  // namespace
}  // namespace brick::quant::kernels
