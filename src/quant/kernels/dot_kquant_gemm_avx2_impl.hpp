#pragma once
// The AVX2 GEMM of Q4_K, Q5_K and Q6_K rows against Q8_K tokens, with the tokens in the lanes, as
// the AVX-512 VNNI one (dot_kquant_gemm_avx512_impl.hpp) but 8 tokens wide and without VNNI: a
// tile's activations are rearranged once so that dword k of lane t holds values 4k..4k+3 of token
// t (for interleaved weights, gathered back into value order from the interleaved activations),
// and four quants of a row (unsigned, broadcast) meet them in vpmaddubsw. Its int16 pairs are
// added as int16 over a run of dwords of one sub-block, as long as no sum can reach 2^15 (runs of 8
// dwords for Q4_K's quants of at most 15, 4 for Q5_K's 31, 2 for Q6_K's 63, against activations of
// magnitude at most 128), and one vpmaddwd by the sub-block's scale takes each run into int32. Four
// rows go side by side, sharing each activation load: the loads, one broadcast of a weight dword
// per vpmaddubsw, are what the loop waits on. The int16 sums use the saturating vpaddsw, which
// never saturates here: GCC rewrites vpaddw chains into trees whose products of four rows spill to
// the stack, and it cannot rewrite vpaddsw (1.1-1.3x as fast over the same rows). The integer totals
// are the row kernels' exact integers and the float operations on them are theirs, in their order
// (dot_scale_min_avx2_impl.hpp: d and -dmin lanes of four blocks; dot_q6k_q8k_avx2.cpp: d lanes of
// four blocks; a last group padded with zeros), so each (row, token) gets the mat-vec's bits.
//
// Included by the AVX2 translation units; everything is in an anonymous namespace so that each
// keeps its own copy, compiled with its own flags.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_layout.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kAvx2LaneTokens = 8;

// Blocks in the sub-block interleaved layout (brick/quant/weight_layout.hpp).
template <class Block>
inline constexpr bool kInterleavedBlock = std::is_same_v<Block, BlockQ4KInterleaved> ||
                                          std::is_same_v<Block, BlockQ5KInterleaved> ||
                                          std::is_same_v<Block, BlockQ6KInterleaved>;

// The activation blocks a weight block meets: Q8_K, interleaved for interleaved weights.
template <class Block>
using Q8KBlockFor = std::conditional_t<kInterleavedBlock<Block>, BlockQ8KInterleaved, BlockQ8K>;

// Q6_K's blocks, in either layout: 16 sub-blocks of 16 with int8 scales, no mins.
template <class Block>
inline constexpr bool kSixBit = std::is_same_v<Block, BlockQ6K> || std::is_same_v<Block, BlockQ6KInterleaved>;

// The int16 pairs of a token's group sums that the weights' pairs multiply: Q6_K's bsums 2p and
// 2p + 1 (its sub-blocks of 16 values), 8 pairs; Q4_K's and Q5_K's sums of sub-blocks 2p and 2p + 1
// (32 values, bsums 4p..4p+3; at most 4096 in magnitude), 4 pairs, one vpmaddwd per two mins.
template <class Block>
inline constexpr int kSumPairs = kSixBit<Block> ? 8 : 4;

// One block of up to 8 tokens, rearranged (lanes past the tile's tokens hold zeros).
struct alignas(32) Avx2TokenBlock {
  __m256i qx[64];        // dword k, lane t: values 4k..4k+3 of token t (int8)
  __m256i sum_pairs[8];  // dword p < kSumPairs, lane t: token t's pair p of group sums (int16 each)
  __m256 d;              // lane t: token t's d
};

// Where run of four values k (values 4k..4k+3) lies in an activation block: for interleaved weights
// the activations are interleaved too (interleaved_position() moves runs of four whole).
template <class Block>
constexpr std::size_t activation_dword(std::size_t k) {
  if constexpr (kInterleavedBlock<Block>) {
    return interleaved_position(4 * k) / 4;
  } else {
    return k;
  }
}

template <class Block>
inline void rearrange_tokens_avx2(const Q8KBlockFor<Block>* x, std::size_t n, std::size_t blocks,
                                  Avx2TokenBlock* tile) {
  const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i offsets =
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                         _mm256_set1_epi32(static_cast<int>(blocks * sizeof(Q8KBlockFor<Block>))));
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto* first = reinterpret_cast<const int*>(&x[b]);
    const auto gather = [&](std::size_t byte_offset) {
      return _mm256_mask_i32gather_epi32(zero, reinterpret_cast<const int*>(reinterpret_cast<const char*>(first) + byte_offset),
                                         offsets, lanes, 1);
    };
    Avx2TokenBlock& out = tile[b];
    for (std::size_t k = 0; k < 64; ++k)
      out.qx[k] = gather(offsetof(Q8KBlockFor<Block>, qs) + 4 * activation_dword<Block>(k));
    __m256i bsum_pairs[8];  // dword p, lane t: token t's bsums 2p and 2p + 1
    for (int p = 0; p < 8; ++p)
      bsum_pairs[p] = gather(offsetof(Q8KBlockFor<Block>, bsums) + 4 * static_cast<std::size_t>(p));
    if constexpr (kSumPairs<Block> == 8) {
      for (int p = 0; p < 8; ++p) out.sum_pairs[p] = bsum_pairs[p];
    } else {
      const __m256i ones = _mm256_set1_epi16(1);
      for (int p = 0; p < 4; ++p) {
        const __m256i even = _mm256_madd_epi16(bsum_pairs[2 * p], ones);
        const __m256i odd = _mm256_madd_epi16(bsum_pairs[2 * p + 1], ones);
        out.sum_pairs[p] = _mm256_blend_epi16(even, _mm256_slli_epi32(odd, 16), 0xAA);
      }
    }
    out.d = _mm256_castsi256_ps(gather(offsetof(Q8KBlockFor<Block>, d)));
  }
}

// The weight side of one block of one row: quants unsigned in value order (whatever the layout), per sub-block its scale
// as the GEMM multiplies with it (lane_scale_operands), the int16 pairs that multiply the tokens'
// sum pairs (Q4_K, Q5_K: (m_2p, m_2p+1), p < 4; Q6_K: (sc_2p, sc_2p+1)), and the float scales of
// the row kernel: Q4_K, Q5_K d and dmin; Q6_K d.
struct alignas(32) Avx2LaneWeights {
  std::uint8_t q[256];
  std::int32_t scales[16];
  std::int32_t pairs[8];
  float d;
  float dmin;
};

// Each int32 v (of int16 range) as the int16 pair (v, v) that vpmaddwd multiplies a pair with.
inline __m256i int16_pairs(__m256i values) {
  return _mm256_or_si256(_mm256_and_si256(values, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(values, 16));
}

// Eight sub-block scales (int32) as Avx2LaneWeights keeps them: without AVX-VNNI the int16 pair
// (sc, sc) that vpmaddwd multiplies a run of products with, with AVX-VNNI sc itself, for vpmulld.
inline __m256i lane_scale_operands(__m256i scales) {
#if defined(__AVXVNNI__)
  return scales;
#else
  return int16_pairs(scales);
#endif
}

// Q6_K's quants of half `half` (128 values) unsigned (0..63), in value order: values 0..31 are the
// low nibbles of ql[0..31] with qh bits 0-1, 32..63 those of ql[32..63] with bits 2-3, 64..95 the
// high nibbles of ql[0..31] with bits 4-5, 96..127 those of ql[32..63] with bits 6-7. 17 vector
// operations.
inline void unpack_q6k_half(const BlockQ6K& w, int half, __m256i (&q)[4]) {
  const __m256i low_nibble = _mm256_set1_epi8(0x0F);
  const __m256i high_bits = _mm256_set1_epi8(0x30);
  const std::uint8_t* ql = w.ql + 64 * half;
  const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
  const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh + 32 * half));
  q[0] = _mm256_or_si256(_mm256_and_si256(ql0, low_nibble), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high_bits));
  q[1] = _mm256_or_si256(_mm256_and_si256(ql1, low_nibble), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high_bits));
  q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low_nibble), _mm256_and_si256(qh, high_bits));
  q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low_nibble),
                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), high_bits));
}

// The same for an interleaved block, its vectors 4 * half .. 4 * half + 3: the low six bits of its
// three packed vectors, and the fourth gathered from their top two bits. 11 vector operations (the
// 16-bit shifts move only bits that the mask has cleared across a byte's edge).
inline void unpack_q6k_half(const BlockQ6KInterleaved& w, int half, __m256i (&q)[4]) {
  const __m256i low_bits = _mm256_set1_epi8(0x3F);
  const __m256i top_bits = _mm256_set1_epi8(static_cast<char>(0xC0));
  const std::uint8_t* packed = w.qs + 96 * half;
  const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed));
  const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed + 32));
  const __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(packed + 64));
  q[0] = _mm256_and_si256(v0, low_bits);
  q[1] = _mm256_and_si256(v1, low_bits);
  q[2] = _mm256_and_si256(v2, low_bits);
  const __m256i top = _mm256_or_si256(_mm256_and_si256(v0, top_bits),
                                      _mm256_or_si256(_mm256_srli_epi16(_mm256_and_si256(v1, top_bits), 2),
                                                      _mm256_srli_epi16(_mm256_and_si256(v2, top_bits), 4)));
  q[3] = _mm256_srli_epi16(top, 2);
}

// Stores an interleaved block's eight vectors of quants in value order: vector k's dword s is
// values 4k..4k+3 of run s (of 32 values), so this is an 8 x 8 transpose of dwords.
inline void store_in_value_order(const __m256i (&v)[8], std::uint8_t* q) {
  __m256i a[8], b[8];
  for (int i = 0; i < 4; ++i) {
    a[2 * i] = _mm256_unpacklo_epi32(v[2 * i], v[2 * i + 1]);
    a[2 * i + 1] = _mm256_unpackhi_epi32(v[2 * i], v[2 * i + 1]);
  }
  for (int i = 0; i < 2; ++i) {
    for (int h = 0; h < 2; ++h) {
      b[4 * i + 2 * h] = _mm256_unpacklo_epi64(a[4 * i + h], a[4 * i + 2 + h]);
      b[4 * i + 2 * h + 1] = _mm256_unpackhi_epi64(a[4 * i + h], a[4 * i + 2 + h]);
    }
  }
  // b[4i + r] holds dword r (and r + 4 in the high lane) of vectors 4i..4i+3.
  for (int r = 0; r < 4; ++r) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32 * r), _mm256_permute2x128_si256(b[r], b[4 + r], 0x20));
    _mm256_store_si256(reinterpret_cast<__m256i*>(q + 32 * (r + 4)), _mm256_permute2x128_si256(b[r], b[4 + r], 0x31));
  }
}

// The largest quant of each weight format, which bounds its int16 runs.
template <class Block>
inline constexpr int kLargestQuant = 0;
template <>
inline constexpr int kLargestQuant<BlockQ4K> = 15;
template <>
inline constexpr int kLargestQuant<BlockQ5K> = 31;
template <>
inline constexpr int kLargestQuant<BlockQ6K> = 63;
template <>
inline constexpr int kLargestQuant<BlockQ4KInterleaved> = 15;
template <>
inline constexpr int kLargestQuant<BlockQ5KInterleaved> = 31;
template <>
inline constexpr int kLargestQuant<BlockQ6KInterleaved> = 63;

// acc + per dword the sum of the products of a's and b's int16 pairs: one vpdpwssd with AVX-VNNI,
// vpmaddwd and vpaddd without (the same exact int32).
inline __m256i add_pair_products(__m256i acc, __m256i a, __m256i b) {
#if defined(__AVXVNNI__)
  return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// The integer totals of one block of R rows for 8 tokens, each activation load shared by the rows:
// scaled = sum_j sc_j * (q_j . x_j) (Q6_K: with q - 32), and for Q4_K / Q5_K mins = sum_j m_j *
// (sum of x_j).
template <class Block, std::size_t R>
inline void avx2_lane_totals(const Avx2LaneWeights* const (&w)[R], const Avx2TokenBlock& x, __m256i (&scaled)[R],
                             __m256i (&mins)[R]) {
  constexpr bool kHasMins = !kSixBit<Block>;
  constexpr int kSubBlock = kHasMins ? 32 : 16;
  constexpr int kDwords = kSubBlock / 4;
  // Dwords per int16 run: each vpmaddubsw pair is at most 2 * kLargestQuant * 128.
  constexpr int kRun = std::min(kDwords, 32767 / (2 * kLargestQuant<Block> * 128));
  static_assert(kRun >= 1 && kDwords % kRun == 0);
  for (std::size_t r = 0; r < R; ++r) scaled[r] = _mm256_setzero_si256();
#if defined(__AVXVNNI__)
  // With AVX-VNNI one vpdpbusd per dword sums the sub-block in int32, and one vpmulld scales it.
  // Two sub-blocks at a time: 2 * R chains of vpdpbusd in flight.
  for (int j = 0; j < 256 / kSubBlock; j += 2) {
    __m256i sums[2][R];
    for (auto& sub_block : sums) {
      for (auto& sum : sub_block) sum = _mm256_setzero_si256();
    }
    for (int k = 0; k < kDwords; ++k) {
      for (int h = 0; h < 2; ++h) {
        const int dword = (j + h) * kDwords + k;
        const __m256i activations = _mm256_load_si256(&x.qx[dword]);
        for (std::size_t r = 0; r < R; ++r) {
          std::int32_t quants;
          std::memcpy(&quants, w[r]->q + 4 * dword, sizeof quants);
          sums[h][r] = _mm256_dpbusd_avx_epi32(sums[h][r], _mm256_set1_epi32(quants), activations);
        }
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (std::size_t r = 0; r < R; ++r) {
        scaled[r] = _mm256_add_epi32(scaled[r], _mm256_mullo_epi32(sums[h][r], _mm256_set1_epi32(w[r]->scales[j + h])));
      }
    }
  }
#else
  for (int j = 0; j < 256 / kSubBlock; ++j) {
    for (int run = 0; run < kDwords; run += kRun) {
      __m256i sums[R];
      for (std::size_t r = 0; r < R; ++r) sums[r] = _mm256_setzero_si256();
      for (int k = run; k < run + kRun; ++k) {
        const int dword = j * kDwords + k;
        const __m256i activations = _mm256_load_si256(&x.qx[dword]);
        for (std::size_t r = 0; r < R; ++r) {
          std::int32_t quants;
          std::memcpy(&quants, w[r]->q + 4 * dword, sizeof quants);
          sums[r] = _mm256_adds_epi16(sums[r], _mm256_maddubs_epi16(_mm256_set1_epi32(quants), activations));
        }
      }
      for (std::size_t r = 0; r < R; ++r) {
        scaled[r] = add_pair_products(scaled[r], sums[r], _mm256_set1_epi32(w[r]->scales[j]));
      }
    }
  }
#endif
  for (std::size_t r = 0; r < R; ++r) {
    __m256i pairs = _mm256_setzero_si256();
    for (int p = 0; p < kSumPairs<Block>; ++p) {
      pairs = add_pair_products(pairs, x.sum_pairs[p], _mm256_set1_epi32(w[r]->pairs[p]));
    }
    if constexpr (kHasMins) {
      mins[r] = pairs;
    } else {
      scaled[r] = _mm256_sub_epi32(scaled[r], _mm256_slli_epi32(pairs, 5));  // the quants' offset of 32
      mins[r] = _mm256_setzero_si256();
    }
  }
}

// R rows (row r's `blocks` blocks unpacked at w + r * blocks) against the tile's n tokens;
// out[t * out_stride + r] for t < n. The format picks the float scheme (Q4_K and Q5_K with mins);
// each row's float operations are the same whatever R is. next.step() once per four blocks.
template <class Block, std::size_t R>
inline void avx2_lane_rows(const Avx2LaneWeights* w, std::size_t blocks, const Avx2TokenBlock* tile, std::size_t n,
                           float* out, std::size_t out_stride, NextChunkPrefetch& next) {
  constexpr bool kHasMins = !kSixBit<Block>;
  constexpr int kLanes = kHasMins ? 8 : 4;  // the row kernel's accumulator lanes
  __m256 acc[R][kLanes];
  for (auto& row : acc) {
    for (auto& a : row) a = _mm256_setzero_ps();
  }
  // Each block's terms go into its lanes' accumulators as soon as they are computed: every lane
  // belongs to one block of the group, so each accumulator still takes its terms in the row
  // kernel's order, and no block's scales and totals wait in memory for the group's end.
  for (std::size_t b = 0; b < blocks; b += 4) {
    next.step();
    for (int i = 0; i < 4; ++i) {
      const std::size_t block = b + static_cast<std::size_t>(i);
      if (block < blocks) {
        const Avx2TokenBlock& x = tile[block];
        const Avx2LaneWeights* weights[R];
        for (std::size_t r = 0; r < R; ++r) weights[r] = w + r * blocks + block;
        __m256i scaled[R];
        __m256i mins[R];
        avx2_lane_totals<Block, R>(weights, x, scaled, mins);
        for (std::size_t r = 0; r < R; ++r) {
          acc[r][i] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(weights[r]->d), x.d), _mm256_cvtepi32_ps(scaled[r]),
                                      acc[r][i]);
          if constexpr (kHasMins) {
            // -(dmin * xd): the negated product, as the row kernel stores it.
            const __m256 minus_min =
                _mm256_xor_ps(_mm256_mul_ps(_mm256_set1_ps(weights[r]->dmin), x.d), _mm256_set1_ps(-0.0f));
            acc[r][4 + i] = _mm256_fmadd_ps(minus_min, _mm256_cvtepi32_ps(mins[r]), acc[r][4 + i]);
          }
        }
      } else {  // past the row's end: the row kernel's zero scales and sums
        const __m256 zero = _mm256_setzero_ps();
        for (std::size_t r = 0; r < R; ++r) {
          acc[r][i] = _mm256_fmadd_ps(zero, zero, acc[r][i]);
          if constexpr (kHasMins) acc[r][4 + i] = _mm256_fmadd_ps(zero, zero, acc[r][4 + i]);
        }
      }
    }
  }
  for (std::size_t r = 0; r < R; ++r) {
    // The row kernel's horizontal sum: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) for eight
    // lanes, (a0 + a2) + (a1 + a3) for four.
    const __m256* a = acc[r];
    __m256 sum;
    if constexpr (kHasMins) {
      const __m256 s0 = _mm256_add_ps(a[0], a[4]);
      const __m256 s1 = _mm256_add_ps(a[1], a[5]);
      const __m256 s2 = _mm256_add_ps(a[2], a[6]);
      const __m256 s3 = _mm256_add_ps(a[3], a[7]);
      sum = _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3));
    } else {
      sum = _mm256_add_ps(_mm256_add_ps(a[0], a[2]), _mm256_add_ps(a[1], a[3]));
    }
    alignas(32) float sums[kAvx2LaneTokens];
    _mm256_store_ps(sums, sum);
    for (std::size_t t = 0; t < n; ++t) out[t * out_stride + r] = sums[t];
  }
}

// Rows walked side by side by the GEMM, sharing each activation load (3 and 4 measured alike, 2
// slower).
inline constexpr std::size_t kAvx2LaneRows = 4;

// About this many bytes of unpacked weights are walked against every tile of tokens before the next
// rows: they stay in L2 while the tiles stream past, and each block is unpacked once per call.
inline constexpr std::size_t kAvx2UnpackedChunkBytes = 256 * 1024;

// The GEMM kernel: every tile of 8 tokens rearranged once into the calling thread's buffer; then
// chunks of rows, unpacked once by Unpack(block, Avx2LaneWeights&), each against every tile,
// kAvx2LaneRows rows at a time, the next chunk prefetched meanwhile.
template <class Block, class Unpack>
inline void dot_tokens_in_lanes_avx2(const Block* w, std::size_t rows, const Q8KBlockFor<Block>* x,
                                     std::size_t tokens, std::size_t blocks, float* out, std::size_t out_stride,
                                     Unpack unpack) {
  thread_local std::vector<Avx2TokenBlock> tiles;
  thread_local std::vector<Avx2LaneWeights> unpacked;
  const std::size_t tile_count = (tokens + kAvx2LaneTokens - 1) / kAvx2LaneTokens;
  if (tiles.size() < tile_count * blocks) tiles.resize(tile_count * blocks);
  const auto tile_tokens = [&](std::size_t t) {
    return tokens - t * kAvx2LaneTokens < kAvx2LaneTokens ? tokens - t * kAvx2LaneTokens : kAvx2LaneTokens;
  };
  for (std::size_t t = 0; t < tile_count; ++t) {
    rearrange_tokens_avx2<Block>(x + t * kAvx2LaneTokens * blocks, tile_tokens(t), blocks, tiles.data() + t * blocks);
  }
  std::size_t chunk = kAvx2UnpackedChunkBytes / (blocks * sizeof(Avx2LaneWeights));
  if (chunk < 1) chunk = 1;
  if (unpacked.size() < chunk * blocks) unpacked.resize(chunk * blocks);
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = rows - first_row < chunk ? rows - first_row : chunk;
    for (std::size_t i = 0; i < chunk_rows * blocks; ++i) unpack(w[first_row * blocks + i], unpacked[i]);
    const std::size_t next_rows = rows - first_row - chunk_rows < chunk ? rows - first_row - chunk_rows : chunk;
    NextChunkPrefetch next(w + (first_row + chunk_rows) * blocks, next_rows * blocks * sizeof(Block),
                           tile_count * (chunk_rows / kAvx2LaneRows + chunk_rows % kAvx2LaneRows) * ((blocks + 3) / 4));
    for (std::size_t t = 0; t < tile_count; ++t) {
      const Avx2TokenBlock* const tile = tiles.data() + t * blocks;
      float* const tile_out = out + t * kAvx2LaneTokens * out_stride + first_row;
      std::size_t r = 0;
      for (; r + kAvx2LaneRows <= chunk_rows; r += kAvx2LaneRows) {
        avx2_lane_rows<Block, kAvx2LaneRows>(unpacked.data() + r * blocks, blocks, tile, tile_tokens(t), tile_out + r,
                                             out_stride, next);
      }
      for (; r < chunk_rows; ++r) {
        avx2_lane_rows<Block, 1>(unpacked.data() + r * blocks, blocks, tile, tile_tokens(t), tile_out + r, out_stride,
                                 next);
      }
    }
  }
}

}  // namespace
}  // namespace brick::quant::kernels
