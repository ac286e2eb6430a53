#pragma once
// The AVX2 GEMM of Q4_K, Q5_K and Q6_K rows against Q8_K tokens, with the tokens in the lanes, as
// the AVX-512 VNNI one (dot_kquant_gemm_avx512_impl.hpp) but 8 tokens wide and without VNNI: a
// tile's activations are rearranged once so that dword k of lane t holds values 4k..4k+3 of token
// t, and four quants of a row (unsigned, broadcast) meet them in vpmaddubsw, whose int16 pairs
// vpmaddwd adds into int32 (two products of at most 63 * 128 stay below 2^15). The integer totals
// are the row kernels' exact integers and the float operations on them are theirs, in their order
// (dot_scale_min_avx2_impl.hpp: d and -dmin lanes of four blocks; dot_q6k_q8k_avx2.cpp: d lanes of
// four blocks; a last group padded with zeros), so each (row, token) gets the mat-vec's bits.
//
// Included by the AVX2 translation units; everything is in an anonymous namespace so that each
// keeps its own copy, compiled with its own flags.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "brick/quant/kquants.hpp"

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kAvx2LaneTokens = 8;

// One block of up to 8 tokens, rearranged (lanes past the tile's tokens hold zeros).
struct alignas(32) Avx2TokenBlock {
  __m256i qx[64];         // dword k, lane t: values 4k..4k+3 of token t (int8)
  __m256i bsum_pairs[8];  // dword p, lane t: token t's bsums 2p and 2p + 1 (int16 each)
  __m256 d;               // lane t: token t's d
};

inline void rearrange_tokens_avx2(const BlockQ8K* x, std::size_t n, std::size_t blocks, Avx2TokenBlock* tile) {
  const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                             _mm256_set1_epi32(static_cast<int>(blocks * sizeof(BlockQ8K))));
  const __m256i zero = _mm256_setzero_si256();
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto* first = reinterpret_cast<const int*>(&x[b]);
    const auto gather = [&](std::size_t byte_offset) {
      return _mm256_mask_i32gather_epi32(zero, reinterpret_cast<const int*>(reinterpret_cast<const char*>(first) + byte_offset),
                                         offsets, lanes, 1);
    };
    Avx2TokenBlock& out = tile[b];
    for (int k = 0; k < 64; ++k) out.qx[k] = gather(offsetof(BlockQ8K, qs) + 4 * static_cast<std::size_t>(k));
    for (int p = 0; p < 8; ++p) out.bsum_pairs[p] = gather(offsetof(BlockQ8K, bsums) + 4 * static_cast<std::size_t>(p));
    out.d = _mm256_castsi256_ps(gather(offsetof(BlockQ8K, d)));
  }
}

// The weight side of one block of one row: quants unsigned in value order, per sub-block its scale
// as int32, the int16 pairs that multiply the tokens' bsum pairs (Q4_K, Q5_K: (m_j, m_j); Q6_K:
// (sc_2p, sc_2p+1)), and the float scales of the row kernel: Q4_K, Q5_K d and dmin; Q6_K d.
struct alignas(32) Avx2LaneWeights {
  std::uint8_t q[256];
  std::int32_t scales[16];
  std::int32_t pairs[8];
  float d;
  float dmin;
};

// Q6_K's quants of half `half` (128 values) unsigned (0..63), in value order: values 0..31 are the
// low nibbles of ql[0..31] with qh bits 0-1, 32..63 those of ql[32..63] with bits 2-3, 64..95 the
// high nibbles of ql[0..31] with bits 4-5, 96..127 those of ql[32..63] with bits 6-7.
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

// The integer totals of one block for 8 tokens: scaled = sum_j sc_j * (q_j . x_j) (Q6_K: with q -
// 32), and for Q4_K / Q5_K mins = sum_j m_j * (sum of x_j).
template <bool kHasMins>
inline void avx2_lane_totals(const Avx2LaneWeights& w, const Avx2TokenBlock& x, __m256i& scaled, __m256i& mins) {
  constexpr int kSubBlock = kHasMins ? 32 : 16;
  constexpr int kDwords = kSubBlock / 4;
  const __m256i ones = _mm256_set1_epi16(1);
  scaled = _mm256_setzero_si256();
  for (int j = 0; j < 256 / kSubBlock; ++j) {
    __m256i sums = _mm256_setzero_si256();
    for (int k = 0; k < kDwords; ++k) {
      const int dword = j * kDwords + k;
      std::int32_t quants;
      std::memcpy(&quants, w.q + 4 * dword, sizeof quants);
      const __m256i products = _mm256_maddubs_epi16(_mm256_set1_epi32(quants), _mm256_load_si256(&x.qx[dword]));
      sums = _mm256_add_epi32(sums, _mm256_madd_epi16(products, ones));
    }
    scaled = _mm256_add_epi32(scaled, _mm256_mullo_epi32(sums, _mm256_set1_epi32(w.scales[j])));
  }
  __m256i pairs = _mm256_setzero_si256();
  for (int p = 0; p < 8; ++p) {
    pairs = _mm256_add_epi32(pairs, _mm256_madd_epi16(x.bsum_pairs[p], _mm256_set1_epi32(w.pairs[p])));
  }
  if constexpr (kHasMins) {
    mins = pairs;
  } else {
    scaled = _mm256_sub_epi32(scaled, _mm256_slli_epi32(pairs, 5));  // the quants' offset of 32
    mins = _mm256_setzero_si256();
  }
}

// One row (its `blocks` blocks unpacked in w) against the tile's n tokens; out[t * out_stride] for
// t < n. kHasMins picks the float scheme.
template <bool kHasMins>
inline void avx2_lane_row(const Avx2LaneWeights* w, std::size_t blocks, const Avx2TokenBlock* tile, std::size_t n,
                          float* out, std::size_t out_stride) {
  constexpr int kLanes = kHasMins ? 8 : 4;  // the row kernel's accumulator lanes
  __m256 acc[kLanes];
  for (auto& a : acc) a = _mm256_setzero_ps();
  for (std::size_t b = 0; b < blocks; b += 4) {
    __m256 scales[kLanes];
    __m256 totals[kLanes];
    for (int i = 0; i < 4; ++i) {
      if (b + static_cast<std::size_t>(i) < blocks) {
        const Avx2LaneWeights& weights = w[b + static_cast<std::size_t>(i)];
        const Avx2TokenBlock& x = tile[b + static_cast<std::size_t>(i)];
        __m256i scaled;
        __m256i mins;
        avx2_lane_totals<kHasMins>(weights, x, scaled, mins);
        scales[i] = _mm256_mul_ps(_mm256_set1_ps(weights.d), x.d);
        totals[i] = _mm256_cvtepi32_ps(scaled);
        if constexpr (kHasMins) {
          // -(dmin * xd): the negated product, as the row kernel stores it.
          scales[4 + i] = _mm256_xor_ps(_mm256_mul_ps(_mm256_set1_ps(weights.dmin), x.d), _mm256_set1_ps(-0.0f));
          totals[4 + i] = _mm256_cvtepi32_ps(mins);
        }
      } else {  // past the row's end: the row kernel's zero scales and sums
        scales[i] = totals[i] = _mm256_setzero_ps();
        if constexpr (kHasMins) scales[4 + i] = totals[4 + i] = _mm256_setzero_ps();
      }
    }
    for (int l = 0; l < kLanes; ++l) acc[l] = _mm256_fmadd_ps(scales[l], totals[l], acc[l]);
  }
  // The row kernel's horizontal sum: ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)) for eight
  // lanes, (a0 + a2) + (a1 + a3) for four.
  __m256 sum;
  if constexpr (kHasMins) {
    const __m256 s0 = _mm256_add_ps(acc[0], acc[4]);
    const __m256 s1 = _mm256_add_ps(acc[1], acc[5]);
    const __m256 s2 = _mm256_add_ps(acc[2], acc[6]);
    const __m256 s3 = _mm256_add_ps(acc[3], acc[7]);
    sum = _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3));
  } else {
    sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
  }
  alignas(32) float sums[kAvx2LaneTokens];
  _mm256_store_ps(sums, sum);
  for (std::size_t t = 0; t < n; ++t) out[t * out_stride] = sums[t];
}

// About this many bytes of unpacked weights are walked against every tile of tokens before the next
// rows: they stay in L2 while the tiles stream past, and each block is unpacked once per call.
inline constexpr std::size_t kAvx2UnpackedChunkBytes = 256 * 1024;

// The GEMM kernel: every tile of 8 tokens rearranged once into the calling thread's buffer; then
// chunks of rows, unpacked once by Unpack(block, Avx2LaneWeights&), each against every tile.
template <bool kHasMins, class Block, class Unpack>
inline void dot_tokens_in_lanes_avx2(const Block* w, std::size_t rows, const BlockQ8K* x, std::size_t tokens,
                                     std::size_t blocks, float* out, std::size_t out_stride, Unpack unpack) {
  thread_local std::vector<Avx2TokenBlock> tiles;
  thread_local std::vector<Avx2LaneWeights> unpacked;
  const std::size_t tile_count = (tokens + kAvx2LaneTokens - 1) / kAvx2LaneTokens;
  if (tiles.size() < tile_count * blocks) tiles.resize(tile_count * blocks);
  const auto tile_tokens = [&](std::size_t t) {
    return tokens - t * kAvx2LaneTokens < kAvx2LaneTokens ? tokens - t * kAvx2LaneTokens : kAvx2LaneTokens;
  };
  for (std::size_t t = 0; t < tile_count; ++t) {
    rearrange_tokens_avx2(x + t * kAvx2LaneTokens * blocks, tile_tokens(t), blocks, tiles.data() + t * blocks);
  }
  std::size_t chunk = kAvx2UnpackedChunkBytes / (blocks * sizeof(Avx2LaneWeights));
  if (chunk < 1) chunk = 1;
  if (unpacked.size() < chunk * blocks) unpacked.resize(chunk * blocks);
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = rows - first_row < chunk ? rows - first_row : chunk;
    for (std::size_t i = 0; i < chunk_rows * blocks; ++i) unpack(w[first_row * blocks + i], unpacked[i]);
    for (std::size_t t = 0; t < tile_count; ++t) {
      for (std::size_t r = 0; r < chunk_rows; ++r) {
        avx2_lane_row<kHasMins>(unpacked.data() + r * blocks, blocks, tiles.data() + t * blocks, tile_tokens(t),
                                out + t * kAvx2LaneTokens * out_stride + first_row + r, out_stride);
      }
    }
  }
}

}  // namespace
}  // namespace brick::quant::kernels
