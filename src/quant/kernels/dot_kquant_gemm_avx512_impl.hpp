#pragma once
// The AVX-512 VNNI GEMM of Q4_K, Q5_K and Q6_K rows against Q8_K tokens, with the tokens in the
// lanes: 16 tokens' activations are rearranged once per tile so that dword k of lane t holds
// values 4k..4k+3 of token t, plus 128 (unsigned), and each vpdpbusd multiplies them with four
// quants of a weight row, broadcast from memory as its signed operand (the quants are 0..63); the
// 128 * sum of the quants this adds is removed once per block. Nothing is reduced across lanes: per sub-block the
// integer sums are scaled, per block the integer totals become floats. Those totals are the exact
// integers the mat-vec kernels compute, and the float operations on them are dot_one_row's in its
// order (four accumulators by block position, the last blocks into the first, then (0 + 2) +
// (1 + 3)), so each (row, token) gets the mat-vec's bits.
//
// Included after dot_kquant_avx512_impl.hpp by the VNNI translation units; everything is in an
// anonymous namespace so that each keeps its own copy, compiled with its own flags.
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "quant/kernels/dot_kquant_avx512_impl.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kLaneTokens = 16;

// One block of up to 16 tokens, rearranged (lanes past the tile's tokens hold zeros).
struct alignas(64) TokenLaneBlock {
  __m512i qx[64];        // dword k, lane t: values 4k..4k+3 of token t, + 128 (uint8)
  __m512i sum_pairs[8];  // dword p < sum_pairs(), lane t: token t's pair p of group sums (int16 each)
  __m512 d;              // lane t: token t's d
};

// The int16 pairs of a token's group sums that the weights' pairs multiply: with sub-blocks of 16
// values (Q6_K) its bsums 2p and 2p + 1, 8 pairs; with sub-blocks of 32 (Q4_K, Q5_K) the sums of
// sub-blocks 2p and 2p + 1 (bsums 4p..4p+3, at most 4096 in magnitude), 4 pairs, one vpdpwssd per
// two mins.
constexpr int sum_pairs(int sub_block) { return sub_block == 16 ? 8 : 4; }

// Tokens 0..n-1 (n <= 16) of x, each `blocks` blocks long, into tile[0..blocks), for weights of
// sub-blocks of kSubBlock values.
template <int kSubBlock>
inline void rearrange_tokens(const BlockQ8K* x, std::size_t n, std::size_t blocks, TokenLaneBlock* tile) {
  const __mmask16 lanes = static_cast<__mmask16>((1u << n) - 1);
  const __m512i offsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                             _mm512_set1_epi32(static_cast<int>(blocks * sizeof(BlockQ8K))));
  const __m512i zero = _mm512_setzero_si512();
  for (std::size_t b = 0; b < blocks; ++b) {
    const BlockQ8K& first = x[b];
    TokenLaneBlock& out = tile[b];
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));  // x + 128 = x ^ 0x80 for int8 x
    for (int k = 0; k < 64; ++k) {
      out.qx[k] = _mm512_xor_si512(_mm512_mask_i32gather_epi32(zero, lanes, offsets, first.qs + 4 * k, 1), offset);
    }
    __m512i bsum_pairs[8];  // dword p, lane t: token t's bsums 2p and 2p + 1
    for (int p = 0; p < 8; ++p) {
      bsum_pairs[p] = _mm512_mask_i32gather_epi32(zero, lanes, offsets, first.bsums + 2 * p, 1);
    }
    if constexpr (sum_pairs(kSubBlock) == 8) {
      for (int p = 0; p < 8; ++p) out.sum_pairs[p] = bsum_pairs[p];
    } else {
      const __m512i ones = _mm512_set1_epi16(1);
      for (int p = 0; p < 4; ++p) {
        const __m512i even = _mm512_madd_epi16(bsum_pairs[2 * p], ones);
        const __m512i odd = _mm512_madd_epi16(bsum_pairs[2 * p + 1], ones);
        out.sum_pairs[p] = _mm512_mask_blend_epi16(0xAAAAAAAA, even, _mm512_slli_epi32(odd, 16));
      }
    }
    out.d = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), lanes, offsets, &first.d, 1);
  }
}

// The weight side of one block of one row: its quants unsigned in value order, per sub-block its
// scale as int32, the int16 pairs that multiply the tokens' sum pairs (Q4_K, Q5_K: (m_2p, m_2p+1),
// p < 4; Q6_K: (sc_2p, sc_2p+1)), d and dmin.
struct alignas(64) LaneWeights {
  std::uint8_t q[256];
  std::int32_t scales[16];
  std::int32_t pairs[8];
  std::int32_t offset;  // 128 * sum_j sc_j * (sum of the quants of sub-block j)
  float d;
  float dmin;
};

// 128 * sum_j sc_j * (sum of sub-block j's quants) for the quants q[0..3] in value order and 16
// int32 scales (sub-blocks of kSubBlock values): vpsadbw sums each 8 quants, vpmuldq weighs them
// with their sub-block's scale.
template <int kSubBlock>
struct QwordSubBlocks {
  // index[v], dword 2i: the sub-block of qword i of quant vector v.
  alignas(64) std::int32_t index[4][16] = {};
  constexpr QwordSubBlocks() {
    for (int v = 0; v < 4; ++v) {
      for (int i = 0; i < 8; ++i) index[v][2 * i] = (64 * v + 8 * i) / kSubBlock;
    }
  }
};

template <int kSubBlock>
inline constexpr QwordSubBlocks<kSubBlock> kQwordSubBlocks{};

template <int kSubBlock>
inline std::int32_t quant_offset(const __m512i (&q)[4], __m512i scales) {
  __m512i total = _mm512_setzero_si512();
  for (int v = 0; v < 4; ++v) {
    const __m512i index = _mm512_load_si512(kQwordSubBlocks<kSubBlock>.index[v]);
    const __m512i eight_sums = _mm512_sad_epu8(q[v], _mm512_setzero_si512());
    total = _mm512_add_epi64(total, _mm512_mul_epi32(eight_sums, _mm512_permutexvar_epi32(index, scales)));
  }
  return static_cast<std::int32_t>(128 * _mm512_reduce_add_epi64(total));
}

template <Avx512Level kLevel, class Block>
inline void unpack_lane_weights(const ScaleMinDot<Block, kLevel>& dot, const Block& w, LaneWeights& out) {
  const ScaleMinUnpacked u = unpack<kLevel, Q5KLayout::Chunks, 0>(w, _mm512_setzero_si512(), dot.k);
  for (int v = 0; v < 4; ++v) _mm512_store_si512(out.q + 64 * v, u.q[v]);
  // Low 128 bits: the 8 scales, then the 8 mins.
  const __m128i scales_mins = _mm256_castsi256_si128(unpack_scales_mins(w, w, dot.k.scale_constants));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.scales), _mm256_cvtepu8_epi32(scales_mins));
  _mm_store_si128(reinterpret_cast<__m128i*>(out.pairs), _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8)));
  out.offset = quant_offset<32>(u.q, _mm512_cvtepu8_epi32(scales_mins));
  out.d = fp16_scalar(w.d);
  out.dmin = fp16_scalar(w.dmin);
}

template <Avx512Level kLevel>
inline void unpack_lane_weights(const Q6KDot<kLevel>& dot, const BlockQ6K& w, LaneWeights& out) {
  const Q6KUnpacked u = unpack<kLevel>(w, dot.k);
  for (int v = 0; v < 4; ++v) _mm512_store_si512(out.q + 64 * v, u.q[v]);
  const __m128i scales = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
  _mm512_store_si512(out.scales, _mm512_cvtepi8_epi32(scales));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.pairs), _mm256_cvtepi8_epi16(scales));
  out.offset = quant_offset<16>(u.q, _mm512_cvtepi8_epi32(scales));
  out.d = fp16_scalar(w.d);
  out.dmin = 0.0f;
}

// What distinguishes the formats here: sub-blocks of 32 values with mins (Q4_K, Q5_K) or of 16
// with the quants offset by 32 (Q6_K).
template <class Dot>
inline constexpr bool kHasMins = !std::is_same_v<Dot, Q6KDot<Avx512Level::Vnni>> &&
                                 !std::is_same_v<Dot, Q6KDot<Avx512Level::VnniGfni>>;

// The integer totals of one block for R rows and 16 tokens: scaled[r] = sum_j sc_j * (q_j . x_j)
// (Q6_K: with q - 32), and for Q4_K / Q5_K mins[r] = sum_j m_j * (sum of x_j).
template <class Dot, std::size_t R>
inline void lane_totals(const LaneWeights* const (&w)[R], const TokenLaneBlock& x, __m512i (&scaled)[R],
                        __m512i (&mins)[R]) {
  constexpr int kSubBlock = kHasMins<Dot> ? 32 : 16;
  constexpr int kDwords = kSubBlock / 4;
  for (std::size_t r = 0; r < R; ++r) scaled[r] = _mm512_setzero_si512();
  // Two sub-blocks at a time (2 * R chains of vpdpbusd in flight) while that body is at most 64 of
  // them: on an Intel Xeon 1.025-1.04x as fast as one at a time for four rows (and for eight rows of
  // Q6_K: 1.03-1.04x); eight rows of Q4_K or Q5_K two at a time ran at 0.65x.
  constexpr int kTogether = R * 2 * kDwords <= 64 ? 2 : 1;
  for (int j = 0; j < 256 / kSubBlock; j += kTogether) {
    __m512i sums[kTogether][R];
    for (auto& sub_block : sums) {
      for (auto& sum : sub_block) sum = _mm512_setzero_si512();
    }
    for (int k = 0; k < kDwords; ++k) {
      for (int h = 0; h < kTogether; ++h) {
        const int dword = (j + h) * kDwords + k;
        const __m512i values = _mm512_load_si512(&x.qx[dword]);
        for (std::size_t r = 0; r < R; ++r) {
          sums[h][r] = _mm512_dpbusd_epi32(sums[h][r], values, _mm512_set1_epi32(load_dword(w[r]->q + 4 * dword)));
        }
      }
    }
    for (int h = 0; h < kTogether; ++h) {
      for (std::size_t r = 0; r < R; ++r) {
        scaled[r] = _mm512_add_epi32(scaled[r], _mm512_mullo_epi32(sums[h][r], _mm512_set1_epi32(w[r]->scales[j + h])));
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    scaled[r] = _mm512_sub_epi32(scaled[r], _mm512_set1_epi32(w[r]->offset));
    __m512i pairs = _mm512_setzero_si512();
    for (int p = 0; p < sum_pairs(kSubBlock); ++p) {
      pairs = _mm512_dpwssd_epi32(pairs, x.sum_pairs[p], _mm512_set1_epi32(w[r]->pairs[p]));
    }
    if constexpr (kHasMins<Dot>) {
      mins[r] = pairs;
    } else {
      scaled[r] = _mm512_sub_epi32(scaled[r], _mm512_slli_epi32(pairs, 5));  // the quants' offset of 32
      mins[r] = _mm512_setzero_si512();
    }
  }
}

// acc + d * xd * scaled - dmin * xd * mins (Q6_K: acc + d * xd * scaled), as the mat-vec's group().
template <class Dot>
inline __m512 lane_accumulate(const LaneWeights& w, __m512 xd, __m512i scaled, __m512i mins, __m512 acc) {
  const __m512 with_scaled = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(w.d), xd), _mm512_cvtepi32_ps(scaled), acc);
  if constexpr (!kHasMins<Dot>) return with_scaled;
  return _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_set1_ps(w.dmin), xd), _mm512_cvtepi32_ps(mins), with_scaled);
}

// d * xd * scaled - dmin * xd * mins on its own, as the mat-vec's tail() computes it.
template <class Dot>
inline __m512 lane_value(const LaneWeights& w, __m512 xd, __m512i scaled, __m512i mins) {
  const __m512 d_scaled = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(w.d), xd), _mm512_cvtepi32_ps(scaled));
  if constexpr (!kHasMins<Dot>) return d_scaled;
  return _mm512_fnmadd_ps(_mm512_mul_ps(_mm512_set1_ps(w.dmin), xd), _mm512_cvtepi32_ps(mins), d_scaled);
}

// R rows of unpacked weights w (`blocks` per row) against the tile's n tokens; out[t * out_stride +
// r] for t < n. next.step() once per block.
template <std::size_t R, class Dot>
inline void lane_rows(const LaneWeights* w, std::size_t blocks, const TokenLaneBlock* tile, std::size_t n,
                      float* out, std::size_t out_stride, NextChunkPrefetch& next) {
  __m512 acc[R][4];
  for (std::size_t r = 0; r < R; ++r) {
    for (auto& a : acc[r]) a = _mm512_setzero_ps();
  }
  const std::size_t grouped = blocks / 4 * 4;
  for (std::size_t b = 0; b < blocks; ++b) {
    next.step();
    const LaneWeights* views[R];
    for (std::size_t r = 0; r < R; ++r) views[r] = &w[r * blocks + b];
    __m512i scaled[R];
    __m512i mins[R];
    lane_totals<Dot>(views, tile[b], scaled, mins);
    for (std::size_t r = 0; r < R; ++r) {
      if (b < grouped) {
        acc[r][b % 4] = lane_accumulate<Dot>(*views[r], tile[b].d, scaled[r], mins[r], acc[r][b % 4]);
      } else {
        acc[r][0] = _mm512_add_ps(acc[r][0], lane_value<Dot>(*views[r], tile[b].d, scaled[r], mins[r]));
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    alignas(64) float sums[kLaneTokens];
    _mm512_store_ps(sums, _mm512_add_ps(_mm512_add_ps(acc[r][0], acc[r][2]), _mm512_add_ps(acc[r][1], acc[r][3])));
    for (std::size_t t = 0; t < n; ++t) out[t * out_stride + r] = sums[t];
  }
}

// About this many bytes of unpacked weights are walked against every tile of tokens before the next
// rows: they stay in L2 while the tiles stream past, and each block is unpacked once per call.
inline constexpr std::size_t kUnpackedChunkBytes = 256 * 1024;

// The GEMM kernel: every tile of 16 tokens rearranged once into the calling thread's buffer; then
// chunks of rows (a multiple of eight), unpacked once, each against every tile, eight rows at a time
// (sharing the activation loads, which a tile streams from L2: on an Intel Xeon four rows were
// 1.10-1.17x as fast as two and eight 1.04-1.09x as fast as four; a build of four rows that spilled
// registers in the loop ran at 0.6x on Zen 4), the next chunk prefetched meanwhile.
template <class Block, class Dot>
inline void dot_tokens_in_lanes(const Dot& dot, const Block* w, std::size_t rows, const BlockQ8K* x,
                                std::size_t tokens, std::size_t blocks, float* out, std::size_t out_stride) {
  thread_local std::vector<TokenLaneBlock> tiles;
  thread_local std::vector<LaneWeights> unpacked;
  const std::size_t tile_count = (tokens + kLaneTokens - 1) / kLaneTokens;
  if (tiles.size() < tile_count * blocks) tiles.resize(tile_count * blocks);
  for (std::size_t t = 0; t < tile_count; ++t) {
    const std::size_t n = tokens - t * kLaneTokens < kLaneTokens ? tokens - t * kLaneTokens : kLaneTokens;
    rearrange_tokens<kHasMins<Dot> ? 32 : 16>(x + t * kLaneTokens * blocks, n, blocks, tiles.data() + t * blocks);
  }
  std::size_t chunk = kUnpackedChunkBytes / (blocks * sizeof(LaneWeights)) / 8 * 8;
  if (chunk < 8) chunk = 8;
  if (unpacked.size() < chunk * blocks) unpacked.resize(chunk * blocks);
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = rows - first_row < chunk ? rows - first_row : chunk;
    for (std::size_t i = 0; i < chunk_rows * blocks; ++i) unpack_lane_weights(dot, w[first_row * blocks + i], unpacked[i]);
    const std::size_t next_rows = rows - first_row - chunk_rows < chunk ? rows - first_row - chunk_rows : chunk;
    NextChunkPrefetch next(w + (first_row + chunk_rows) * blocks, next_rows * blocks * sizeof(Block),
                           tile_count * (chunk_rows / 8 + chunk_rows % 8 / 4 + chunk_rows % 4) * blocks);
    for (std::size_t t = 0; t < tile_count; ++t) {
      const std::size_t n = tokens - t * kLaneTokens < kLaneTokens ? tokens - t * kLaneTokens : kLaneTokens;
      const TokenLaneBlock* const tile = tiles.data() + t * blocks;
      float* const tile_out = out + t * kLaneTokens * out_stride + first_row;
      std::size_t r = 0;
      for (; r + 8 <= chunk_rows; r += 8) {
        lane_rows<8, Dot>(unpacked.data() + r * blocks, blocks, tile, n, tile_out + r, out_stride, next);
      }
      for (; r + 4 <= chunk_rows; r += 4) {
        lane_rows<4, Dot>(unpacked.data() + r * blocks, blocks, tile, n, tile_out + r, out_stride, next);
      }
      for (; r < chunk_rows; ++r) {
        lane_rows<1, Dot>(unpacked.data() + r * blocks, blocks, tile, n, tile_out + r, out_stride, next);
      }
    }
  }
}

}  // namespace
}  // namespace brick::quant::kernels
