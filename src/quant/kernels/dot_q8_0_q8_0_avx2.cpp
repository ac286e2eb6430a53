// Q8_0·Q8_0 with AVX2: each block's 32 products summed exactly in eight int32 lanes, lane j holding
// products 4j..4j+3, converted to float and accumulated with the block's scale d_w * d_x by one FMA
// (four accumulators by block position, added (0 + 2) + (1 + 3) at the end).
//
// The lanes come from _mm256_maddubs_epi16(|w|, x * sign(w)) and _mm256_madd_epi16 by ones, which is
// exact unless x holds -128 (its negation wraps, and two products of 128 * 128 saturate the int16
// pair). A call whose x holds -128 anywhere widens both operands to int16 instead
// (_mm256_madd_epi16) and groups the products into the same lanes, so it gives the same bits. The
// rows kernel scans x once for all its rows; a single row's dot tracks x's smallest quant as it goes
// (one vpminsb on quants it loads anyway) and runs the row again widened only if that was -128.
//
// The GEMM walks one row against two tokens at a time, each with its own four accumulators, so that
// it gives the rows kernel's bits; what the two tokens share is the weight block's load, magnitudes
// and scale.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/simd_avx2.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {
namespace {

inline __m256i load_quants(const BlockQ80& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }

inline bool holds_minus128(__m256i quants) {
  return _mm256_movemask_epi8(_mm256_cmpeq_epi8(quants, _mm256_set1_epi8(static_cast<char>(0x80)))) != 0;
}

// True when no quant of x is -128.
inline bool signs_flip_exactly(const BlockQ80* x, std::size_t blocks) {
  __m256i smallest = _mm256_set1_epi8(127);
  for (std::size_t b = 0; b < blocks; ++b) smallest = _mm256_min_epi8(smallest, load_quants(x[b]));
  return !holds_minus128(smallest);
}

// Lane j: products 4j..4j+3 of the block, for x without -128.
inline __m256i block_sum_signs(const BlockQ80& w, const BlockQ80& x) {
  const __m256i wq = load_quants(w);
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(wq, wq), _mm256_sign_epi8(load_quants(x), wq));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

// The same lanes for any quants: pairs of products from int16 operands, added four by four.
inline __m256i block_sum_widened(const BlockQ80& w, const BlockQ80& x) {
  const __m256i wq = load_quants(w);
  const __m256i xq = load_quants(x);
  // low lane i: products 2i, 2i + 1; high lane i: products 16 + 2i, 17 + 2i.
  const __m256i low = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(wq)),
                                        _mm256_cvtepi8_epi16(_mm256_castsi256_si128(xq)));
  const __m256i high = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(wq, 1)),
                                         _mm256_cvtepi8_epi16(_mm256_extracti128_si256(xq, 1)));
  // hadd: [0-3, 4-7, 16-19, 20-23 | 8-11, 12-15, 24-27, 28-31]; then into order.
  return _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(low, high), _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
}

inline __m256 block_scale(const BlockQ80& w, const BlockQ80& x) { return _mm256_set1_ps(_cvtsh_ss(w.d) * _cvtsh_ss(x.d)); }

// d_w * d_x of four blocks in the lanes of one vector: one conversion of the eight scales and one
// multiply (the same products as block_scale).
inline __m128 four_block_scales(const BlockQ80* w, const BlockQ80* x) {
  const auto half = [](const BlockQ80& b) { return static_cast<short>(b.d); };
  const __m256 d = _mm256_cvtph_ps(_mm_setr_epi16(half(w[0]), half(w[1]), half(w[2]), half(w[3]), half(x[0]),
                                                  half(x[1]), half(x[2]), half(x[3])));
  return _mm_mul_ps(_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1));
}

inline __m256 broadcast_lane(__m128 v, int lane) {
  return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(v), _mm256_set1_epi32(lane));
}

// With kTrack, the element-wise minimum of x's quants is taken into `smallest` as well.
template <bool kSigns, bool kTrack = false>
inline float dot_blocks(const BlockQ80* w, const BlockQ80* x, std::size_t blocks, __m256i* smallest = nullptr) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  const auto add = [&](std::size_t b, __m256 scale, __m256& to) {
    if constexpr (kTrack) *smallest = _mm256_min_epi8(*smallest, load_quants(x[b]));
    const __m256i sum = kSigns ? block_sum_signs(w[b], x[b]) : block_sum_widened(w[b], x[b]);
    to = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sum), to);
  };
  // Four blocks per iteration, so that the accumulators stay in registers.
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    // Four blocks are 136 bytes: the lines 2 KiB ahead, as the AVX-512 row loops prefetch.
    const char* ahead = reinterpret_cast<const char*>(w + b) + 2048;
    _mm_prefetch(ahead, _MM_HINT_T0);
    _mm_prefetch(ahead + 64, _MM_HINT_T0);
    _mm_prefetch(ahead + 128, _MM_HINT_T0);
    const __m128 scales = four_block_scales(w + b, x + b);
    add(b, broadcast_lane(scales, 0), acc[0]);
    add(b + 1, broadcast_lane(scales, 1), acc[1]);
    add(b + 2, broadcast_lane(scales, 2), acc[2]);
    add(b + 3, broadcast_lane(scales, 3), acc[3]);
  }
  for (std::size_t i = 0; b + i < blocks; ++i) add(b + i, block_scale(w[b + i], x[b + i]), acc[i]);
  return simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3])));
}

// d_w * d_x of four blocks for two tokens: lanes 0-3 token 0's, 4-7 token 1's (the same products
// as four_block_scales).
inline __m256 four_block_scales(const BlockQ80* w, const BlockQ80* x0, const BlockQ80* x1) {
  const auto half = [](const BlockQ80& b) { return static_cast<short>(b.d); };
  const __m256 dx = _mm256_cvtph_ps(_mm_setr_epi16(half(x0[0]), half(x0[1]), half(x0[2]), half(x0[3]), half(x1[0]),
                                                   half(x1[1]), half(x1[2]), half(x1[3])));
  const __m128 dw = _mm_cvtph_ps(_mm_setr_epi16(half(w[0]), half(w[1]), half(w[2]), half(w[3]), 0, 0, 0, 0));
  return _mm256_mul_ps(_mm256_set_m128(dw, dw), dx);
}

inline __m256 broadcast_lane(__m256 v, int lane) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(lane)); }

// One row against two tokens whose quants hold no -128, into *out0 and *out1: each weight block is
// loaded and its magnitudes and d are taken once for both; each token adds its blocks in its own
// four accumulators exactly as dot_blocks<true> does, so each output has the rows kernel's bits.
inline void dot_two_tokens(const BlockQ80* w, const BlockQ80* x0, const BlockQ80* x1, std::size_t blocks,
                           float* out0, float* out1) {
  __m256 acc0[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m256 acc1[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  const __m256i ones = _mm256_set1_epi16(1);
  const auto add = [&](std::size_t b, __m256 scale0, __m256 scale1, std::size_t i) {
    const __m256i wq = load_quants(w[b]);
    const __m256i magnitudes = _mm256_sign_epi8(wq, wq);
    const __m256i pairs0 = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(load_quants(x0[b]), wq));
    const __m256i pairs1 = _mm256_maddubs_epi16(magnitudes, _mm256_sign_epi8(load_quants(x1[b]), wq));
    acc0[i] = _mm256_fmadd_ps(scale0, _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs0, ones)), acc0[i]);
    acc1[i] = _mm256_fmadd_ps(scale1, _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs1, ones)), acc1[i]);
  };
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    const __m256 scales = four_block_scales(w + b, x0 + b, x1 + b);
    add(b, broadcast_lane(scales, 0), broadcast_lane(scales, 4), 0);
    add(b + 1, broadcast_lane(scales, 1), broadcast_lane(scales, 5), 1);
    add(b + 2, broadcast_lane(scales, 2), broadcast_lane(scales, 6), 2);
    add(b + 3, broadcast_lane(scales, 3), broadcast_lane(scales, 7), 3);
  }
  for (std::size_t i = 0; b + i < blocks; ++i) {
    add(b + i, block_scale(w[b + i], x0[b + i]), block_scale(w[b + i], x1[b + i]), i);
  }
  *out0 = simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc0[0], acc0[2]), _mm256_add_ps(acc0[1], acc0[3])));
  *out1 = simd::horizontal_sum(_mm256_add_ps(_mm256_add_ps(acc1[0], acc1[2]), _mm256_add_ps(acc1[1], acc1[3])));
}

// About this many bytes of weight rows are walked against every token before the next rows: they
// stay in L2 while the tokens pass.
inline constexpr std::size_t kChunkBytes = 128 * 1024;

}  // namespace

float dot_q8_0_q8_0_avx2(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  __m256i smallest = _mm256_set1_epi8(127);
  const float signs = dot_blocks<true, true>(w, x, blocks, &smallest);
  return holds_minus128(smallest) ? dot_blocks<false>(w, x, blocks) : signs;
}

void dot_q8_0_q8_0_rows_avx2(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t blocks,
                             float* out) noexcept {
  const bool signs = signs_flip_exactly(x, blocks);
  for (std::size_t r = 0; r < rows; ++r) {
    out[r] = signs ? dot_blocks<true>(w + r * blocks, x, blocks) : dot_blocks<false>(w + r * blocks, x, blocks);
  }
}

// Chunks of rows against the tokens two at a time (one token alone where it or its partner holds
// -128, and the last of an odd count), each token scanned for -128 once per call.
void gemm_q8_0_q8_0_avx2(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t tokens,
                         std::size_t blocks, float* out, std::size_t out_stride) noexcept {
  thread_local std::vector<unsigned char> exact;
  if (exact.size() < tokens) exact.resize(tokens);
  for (std::size_t t = 0; t < tokens; ++t) exact[t] = signs_flip_exactly(x + t * blocks, blocks) ? 1 : 0;
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / (blocks * sizeof(BlockQ80)));
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = std::min(chunk, rows - first_row);
    const BlockQ80* const chunk_w = w + first_row * blocks;
    for (std::size_t t = 0; t < tokens;) {
      const BlockQ80* const x0 = x + t * blocks;
      float* const out0 = out + t * out_stride + first_row;
      if (t + 1 < tokens && exact[t] != 0 && exact[t + 1] != 0) {
        for (std::size_t r = 0; r < chunk_rows; ++r) {
          dot_two_tokens(chunk_w + r * blocks, x0, x0 + blocks, blocks, out0 + r, out0 + out_stride + r);
        }
        t += 2;
        continue;
      }
      for (std::size_t r = 0; r < chunk_rows; ++r) {
        out0[r] = exact[t] != 0 ? dot_blocks<true>(chunk_w + r * blocks, x0, blocks)
                                : dot_blocks<false>(chunk_w + r * blocks, x0, blocks);
      }
      t += 1;
    }
  }
}

}  // namespace brick::quant::kernels
