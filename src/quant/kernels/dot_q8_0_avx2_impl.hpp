#pragma once
// Q8_0·Q8_0 with AVX2, on plain blocks (BlockQ80) and on grouped ones (BlockQ80Group, the same
// blocks 16 to a group, every quant load 32-byte aligned): the same operations in the same order,
// so the same bits, in either layout. Each block's 32 products summed exactly in eight int32 lanes, lane j
// holding products 4j..4j+3, converted to float and accumulated with the block's scale d_w * d_x by
// one FMA (four accumulators by block position, added (0 + 2) + (1 + 3) at the end).
//
// The lanes come from |w| . (x * sign(w)): _mm256_maddubs_epi16 and _mm256_madd_epi16 by ones.
// That is exact unless x holds -128 (its negation wraps, and for vpmaddubsw two products of
// 128 * 128 saturate the int16 pair). A call whose x holds -128
// anywhere widens both operands to int16 instead (_mm256_madd_epi16) and groups the products into
// the same lanes, so it gives the same bits. The rows kernel scans x once for all its rows; a single
// row's dot tracks x's smallest quant as it goes (one vpminsb on quants it loads anyway) and runs
// the row again widened only if that was -128.
//
// The scales d_w * d_x are computed four blocks at a time, a group ahead, and broadcast from memory
// (q8_0_scales.hpp assembles plain blocks' fp16 d's; grouped ones lie side by side); the rows kernel converts x's d to
// floats once for all its rows. Per block that leaves the six vector operations of the products and the FMA.
//
// The GEMM walks a row against a tile of 8 tokens in four passes, one per accumulator of the row
// kernel, so that each token needs one accumulator at a time and gets the rows kernel's bits; the
// tokens share the weight block's load, magnitudes and d, and the passes go a chunk of blocks at a
// time so that the tile's activations stay in L1.
//
// Counts of blocks here are of Q8_0 blocks in either layout (16 per group). Everything is in an
// anonymous namespace so that each translation unit keeps its own copy, compiled with its own flags.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "brick/quant/q8_0.hpp"
#include "core/simd_avx2.hpp"
#include "quant/kernels/q8_0_layouts.hpp"
#include "quant/kernels/q8_0_scales.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

template <class Block>
inline __m256i load_quants(const Block* row, std::size_t b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(quants_of(row, b)));
}

// The d of blocks b..b+3 as floats.
inline __m128 four_scales_as_floats(const BlockQ80* row, std::size_t b) { return four_scales_as_floats(row + b); }
inline __m128 four_scales_as_floats(const BlockQ80Group* row, std::size_t b) {
  return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&scale_of(row, b))));
}

inline bool holds_minus128(__m256i quants) {
  return _mm256_movemask_epi8(_mm256_cmpeq_epi8(quants, _mm256_set1_epi8(static_cast<char>(0x80)))) != 0;
}

// True when no quant of x is -128.
template <class Block>
inline bool signs_flip_exactly(const Block* x, std::size_t blocks) {
  __m256i smallest = _mm256_set1_epi8(127);
  for (std::size_t b = 0; b < blocks; ++b) smallest = _mm256_min_epi8(smallest, load_quants(x, b));
  return !holds_minus128(smallest);
}

// The same lanes for any quants: pairs of products from int16 operands, added four by four.
inline __m256i block_sum_widened(__m256i wq, __m256i xq) {
  // low lane i: products 2i, 2i + 1; high lane i: products 16 + 2i, 17 + 2i.
  const __m256i low = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(wq)),
                                        _mm256_cvtepi8_epi16(_mm256_castsi256_si128(xq)));
  const __m256i high = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(wq, 1)),
                                         _mm256_cvtepi8_epi16(_mm256_extracti128_si256(xq, 1)));
  // hadd: [0-3, 4-7, 16-19, 20-23 | 8-11, 12-15, 24-27, 28-31]; then into order.
  return _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(low, high), _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
}

// The eight lanes of |w| . (x * sign(w)), products 4j..4j+3 in lane j: vpmaddubsw and vpmaddwd by
// ones (no pair saturates while x holds no -128).
inline __m256i signed_block_sum(__m256i magnitudes, __m256i signed_x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_x), _mm256_set1_epi16(1));
}

inline float block_scale(const BlockQ80& w, const BlockQ80& x) { return _cvtsh_ss(w.d) * _cvtsh_ss(x.d); }

// d_w * d_x of blocks b..b+3 into out[0..3], x's d given as floats (dx) or taken from its blocks:
// the same products as block_scale.
inline void store_four_block_scales(const BlockQ80* w, const float* dx, std::size_t b, float* out) {
  _mm_store_ps(out, _mm_mul_ps(four_scales_as_floats(w + b), _mm_loadu_ps(dx + b)));
}
inline void store_four_block_scales(const BlockQ80* w, const BlockQ80* x, std::size_t b, float* out) {
  _mm_store_ps(out, _mm_mul_ps(four_scales_as_floats(w + b), four_scales_as_floats(x + b)));
}

// The scales d_w * d_x of group g's 16 blocks into out[0..15], x's d given as floats (dx) or taken
// from its groups: the same products as block_scale.
inline void store_group_scales(const BlockQ80Group* w, const float* dx, std::size_t g, float* out) {
  for (std::size_t h = 0; h < 2; ++h) {
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[g].d + 8 * h)));
    _mm256_store_ps(out + 8 * h, _mm256_mul_ps(dw, _mm256_loadu_ps(dx + BlockQ80Group::kBlocks * g + 8 * h)));
  }
}
inline void store_group_scales(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t g, float* out) {
  for (std::size_t h = 0; h < 2; ++h) {
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[g].d + 8 * h)));
    const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[g].d + 8 * h)));
    _mm256_store_ps(out + 8 * h, _mm256_mul_ps(dw, dx));
  }
}

// One block's products into `acc` with its scale: the FMA of the block's exact lanes.
template <bool kSigns, bool kTrack>
inline __m256 add_block(const std::int8_t* w, const std::int8_t* x, __m256 scale, __m256 acc, __m256i* smallest) {
  const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  if constexpr (kTrack) *smallest = _mm256_min_epi8(*smallest, xq);
  const __m256i sum =
      kSigns ? signed_block_sum(_mm256_sign_epi8(wq, wq), _mm256_sign_epi8(xq, wq)) : block_sum_widened(wq, xq);
  return _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sum), acc);
}

// Row w against activation row x of groups: the plain rows' dot_blocks (below), the same blocks into
// the same accumulators in the same order, a group's 16 scales computed at its start and its quants
// at fixed offsets.
template <bool kSigns, bool kTrack = false, class XScales>
inline float dot_blocks(const BlockQ80Group* w, const BlockQ80Group* x, std::size_t blocks, XScales dx,
                        __m256i* smallest = nullptr) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  alignas(32) float scales[BlockQ80Group::kBlocks];
  for (std::size_t g = 0; g < blocks / BlockQ80Group::kBlocks; ++g) {
    prefetch_weights_ahead<sizeof(BlockQ80Group)>(&w[g]);
    store_group_scales(w, dx, g, scales);
    const std::int8_t* const wq = w[g].qs;
    const std::int8_t* const xq = x[g].qs;
    const auto add = [&](std::size_t i, __m256 acc) {
      return add_block<kSigns, kTrack>(wq + kQ80BlockSize * i, xq + kQ80BlockSize * i, _mm256_broadcast_ss(&scales[i]),
                                       acc, smallest);
    };
    for (std::size_t i = 0; i < BlockQ80Group::kBlocks; i += 4) {
      acc0 = add(i, acc0);
      acc1 = add(i + 1, acc1);
      acc2 = add(i + 2, acc2);
      acc3 = add(i + 3, acc3);
    }
  }
  return simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc0, acc2), _mm256_add_ps(acc1, acc3)));
}

// Row w against activation row x: four accumulators by block position, added (0 + 2) + (1 + 3).
// x's d come from dx: x's blocks themselves, or their d as floats converted ahead for many rows.
// kSigns: x holds no -128 (the vpmaddubsw products); with kTrack the element-wise minimum of x's
// quants is taken into *smallest as well.
template <bool kSigns, bool kTrack = false, class XScales>
inline float dot_blocks(const BlockQ80* w, const BlockQ80* x, std::size_t blocks, XScales dx,
                        __m256i* smallest = nullptr) {
  const auto add = [&](std::size_t b, __m256 scale, __m256 acc) {
    return add_block<kSigns, kTrack>(quants_of(w, b), quants_of(x, b), scale, acc, smallest);
  };
  // Four blocks per iteration, each into its own accumulator (no array: a scale stored through a
  // float pointer could alias one, and every accumulator would be stored after each block). Each
  // group's scales are computed one group ahead, into the buffer the group before used, and
  // broadcast from memory: loads, where a shuffle per block takes a vector port the products
  // need (computed and used in one iteration, the compiler forwards them into shuffles).
  __m256 acc0 = _mm256_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  alignas(16) float buffers[2][4];
  float* now = buffers[0];
  float* next = buffers[1];
  const auto group = [&](std::size_t b) {
    prefetch_weights_ahead<4 * sizeof(BlockQ80)>(w + b);
    acc0 = add(b, _mm256_broadcast_ss(now), acc0);
    acc1 = add(b + 1, _mm256_broadcast_ss(now + 1), acc1);
    acc2 = add(b + 2, _mm256_broadcast_ss(now + 2), acc2);
    acc3 = add(b + 3, _mm256_broadcast_ss(now + 3), acc3);
  };
  std::size_t b = 0;
  if (blocks >= 4) store_four_block_scales(w, dx, 0, now);
  for (; b + 8 <= blocks; b += 4) {
    store_four_block_scales(w, dx, b + 4, next);
    group(b);
    std::swap(now, next);
  }
  if (b + 4 <= blocks) {
    group(b);
    b += 4;
  }
  const auto tail_scale = [&](std::size_t i) { return _mm256_set1_ps(block_scale(w[b + i], x[b + i])); };
  if (b < blocks) acc0 = add(b, tail_scale(0), acc0);
  if (b + 1 < blocks) acc1 = add(b + 1, tail_scale(1), acc1);
  if (b + 2 < blocks) acc2 = add(b + 2, tail_scale(2), acc2);
  return simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc0, acc2), _mm256_add_ps(acc1, acc3)));
}

// Row w against one activation row x, of which `signs` says whether it holds no -128.
template <class Block, class XScales>
inline float dot_one(const Block* w, const Block* x, std::size_t blocks, bool signs, XScales dx) {
  return signs ? dot_blocks<true>(w, x, blocks, dx) : dot_blocks<false>(w, x, blocks, dx);
}

// About this many bytes of weight rows are walked against every tile of tokens before the next rows:
// they stay in L2 while the tiles pass.
inline constexpr std::size_t kChunkBytes = 128 * 1024;

template <class Block>
inline float dot_row(const Block* w, const Block* x, std::size_t blocks) {
  __m256i smallest = _mm256_set1_epi8(127);
  const float signs = dot_blocks<true, true>(w, x, blocks, x, &smallest);
  return holds_minus128(smallest) ? dot_one(w, x, blocks, false, x) : signs;
}

template <class Block>
inline void dot_rows(const Block* w, std::size_t rows, const Block* x, std::size_t blocks, float* out) {
  const bool signs = signs_flip_exactly(x, blocks);
  thread_local std::vector<float> dx;  // x's d as floats, converted once for all the rows
  if (dx.size() < blocks) dx.resize(blocks);
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) _mm_storeu_ps(dx.data() + b, four_scales_as_floats(x, b));
  for (; b < blocks; ++b) dx[b] = _cvtsh_ss(scale_of(x, b));
  for (std::size_t r = 0; r < rows; ++r) out[r] = dot_one(row_at(w, r, blocks), x, blocks, signs, dx.data());
}

// The GEMM's tiles: up to kTileTokens tokens whose quants hold no -128, with their d as floats,
// block-major (in a tile short of tokens the lanes past them keep whatever they held, unused).
inline constexpr std::size_t kTileTokens = 8;

// A block's 32 quants on their own 32-byte aligned line.
struct alignas(32) AlignedQuants {
  std::int8_t qs[kQ80BlockSize];
};

template <class Block>
struct TokenTile {
  const Block* x[kTileTokens];
  std::size_t column[kTileTokens];  // the token's index in the call
  std::size_t n;
};

// Blocks of a row that each of the GEMM's four passes walks before the next pass: a tile's
// activations of that many blocks (8 KiB for 8 tokens) stay in L1 through the four passes, where a
// whole row's (32 KiB at 4096 values) came from L2 in each on a CPU with a 32 KiB L1D. A multiple
// of 16, so that a chunk holds whole groups.
inline constexpr std::size_t kPassChunkBlocks = 32;

// One row against the first T tokens of a tile in four passes, pass i over the blocks at positions
// i mod 4: those that the row kernel accumulates in its i-th accumulator, in its order, each with
// the same FMA of the same scale d_w * d_x. So each token needs one accumulator at a time, and
// every (row, token) gets the row kernel's bits. The passes go chunk by chunk of kPassChunkBlocks
// blocks, each pass's accumulators kept from one chunk to the next (the same FMAs in the same
// order). dx[b * kTileTokens + t] is token t's d of block b and xq[b * kTileTokens + t] its quants,
// copied once per call so that every load of them is 32-byte aligned (a Q8_0 block is 34 bytes:
// every other load crossed a cache line). The chunk's scales d_w * d_x, eight products per block,
// are stored first and each is broadcast from memory: a load, where moving lane t into every lane
// by vpermps took a vector port. On Zen 3 (AVX2, 32 KiB L1D) against the GEMM before, 4096x4096
// at batch 32 and 512, 1 thread: the chunks 1.26x, aligned activations a further 1.07x, the
// broadcast scales a further 1.28x (42 -> 73 GFLOP/s).
template <std::size_t T, class Block>
inline void row_against_tile(const Block* w, std::size_t blocks, const TokenTile<Block>& tile, const float* dx,
                             const AlignedQuants* xq, float* out, std::size_t out_stride) {
  __m256 passes[4][T];
  for (auto& pass : passes) {
    for (__m256& a : pass) a = _mm256_setzero_ps();
  }
  alignas(32) float chunk_scales[kPassChunkBlocks * kTileTokens];
  const __m256i ones = _mm256_set1_epi16(1);
  // Block b (at index `at` of the row w_at starts) into the accumulators.
  const auto add = [&](__m256(&acc)[T], const Block* w_at, std::size_t at, std::size_t b)
      __attribute__((always_inline)) {
    const __m256i wq = load_quants(w_at, at);
    const __m256i magnitudes = _mm256_sign_epi8(wq, wq);
    for (std::size_t t = 0; t < T; ++t) {
      const __m256i xt = _mm256_load_si256(reinterpret_cast<const __m256i*>(xq[b * kTileTokens + t].qs));
      const __m256i signed_x = _mm256_sign_epi8(xt, wq);
      const __m256i sum = _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_x), ones);
      const __m256 scale = _mm256_broadcast_ss(chunk_scales + (b % kPassChunkBlocks) * kTileTokens + t);
      acc[t] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sum), acc[t]);
    }
  };
  for (std::size_t first = 0; first < blocks; first += kPassChunkBlocks) {
    const std::size_t end = std::min(blocks, first + kPassChunkBlocks);
    for (std::size_t b = first; b < end; ++b) {
      _mm256_store_ps(chunk_scales + (b - first) * kTileTokens,
                      _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(scale_of(w, b))), _mm256_loadu_ps(dx + b * kTileTokens)));
    }
    for (std::size_t i = 0; i < 4; ++i) {
      __m256 acc[T];
      for (std::size_t t = 0; t < T; ++t) acc[t] = passes[i][t];
      if constexpr (std::is_same_v<Block, BlockQ80Group>) {
        // The same blocks group by group, the pass's four in each at fixed offsets.
        constexpr std::size_t kGroup = BlockQ80Group::kBlocks;
        for (std::size_t g = first / kGroup; g < end / kGroup; ++g) {
          for (std::size_t k = i; k < kGroup; k += 4) add(acc, w + g, k, g * kGroup + k);
        }
      } else {
        for (std::size_t b = first + i; b < end; b += 4) add(acc, w, b, b);
      }
      for (std::size_t t = 0; t < T; ++t) passes[i][t] = acc[t];
    }
  }
  for (std::size_t t = 0; t < T; ++t) {
    const __m256 total =
        _mm256_add_ps(_mm256_add_ps(passes[0][t], passes[2][t]), _mm256_add_ps(passes[1][t], passes[3][t]));
    out[tile.column[t] * out_stride] = simd::horizontal_sum(total);
  }
}

// row_against_tile for the tile's own number of tokens.
template <class Block>
inline void row_against(const Block* w, std::size_t blocks, const TokenTile<Block>& tile, const float* dx,
                        const AlignedQuants* xq, float* out, std::size_t out_stride) {
  [&]<std::size_t... N>(std::index_sequence<N...>) {
    ((tile.n == N + 1 ? row_against_tile<N + 1>(w, blocks, tile, dx, xq, out, out_stride) : void()), ...);
  }(std::make_index_sequence<kTileTokens>{});
}

// The tokens without -128 go in tiles of 8 against chunks of rows that stay in L2 while the tiles
// pass; a token with -128 runs the widened single-token dot over the chunk.
template <class Block>
inline void gemm(const Block* w, std::size_t rows, const Block* x, std::size_t tokens, std::size_t blocks, float* out,
                 std::size_t out_stride) {
  thread_local std::vector<TokenTile<Block>> tiles;
  thread_local std::vector<float> scales;  // per tile, dx block-major
  thread_local std::vector<AlignedQuants> quants;  // per tile, xq block-major
  thread_local std::vector<std::size_t> widened;
  tiles.clear();
  widened.clear();
  for (std::size_t t = 0; t < tokens; ++t) {
    const Block* const xt = row_at(x, t, blocks);
    if (!signs_flip_exactly(xt, blocks)) {
      widened.push_back(t);
      continue;
    }
    if (tiles.empty() || tiles.back().n == kTileTokens) tiles.push_back({});
    TokenTile<Block>& tile = tiles.back();
    tile.x[tile.n] = xt;
    tile.column[tile.n] = t;
    ++tile.n;
  }
  scales.resize(tiles.size() * blocks * kTileTokens);
  quants.resize(tiles.size() * blocks * kTileTokens);
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const TokenTile<Block>& tile = tiles[i];
    float* const dx = scales.data() + i * blocks * kTileTokens;
    AlignedQuants* const xq = quants.data() + i * blocks * kTileTokens;
    for (std::size_t b = 0; b < blocks; ++b) {
      for (std::size_t t = 0; t < tile.n; ++t) {
        dx[b * kTileTokens + t] = _cvtsh_ss(scale_of(tile.x[t], b));
        std::memcpy(xq[b * kTileTokens + t].qs, quants_of(tile.x[t], b), kQ80BlockSize);
      }
    }
  }
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / (blocks * sizeof(BlockQ80)));
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = std::min(chunk, rows - first_row);
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      const float* const dx = scales.data() + i * blocks * kTileTokens;
      const AlignedQuants* const xq = quants.data() + i * blocks * kTileTokens;
      for (std::size_t r = 0; r < chunk_rows; ++r) {
        row_against(row_at(w, first_row + r, blocks), blocks, tiles[i], dx, xq, out + first_row + r, out_stride);
      }
    }
    for (const std::size_t t : widened) {
      const Block* const xt = row_at(x, t, blocks);
      for (std::size_t r = 0; r < chunk_rows; ++r) {
        out[t * out_stride + first_row + r] = dot_one(row_at(w, first_row + r, blocks), xt, blocks, false, xt);
      }
    }
  }
}

}  // namespace
}  // namespace brick::quant::kernels
