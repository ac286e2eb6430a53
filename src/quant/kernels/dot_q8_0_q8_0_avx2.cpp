// Q8_0·Q8_0 with AVX2: each block's 32 products summed exactly in eight int32 lanes, lane j
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
// The GEMM walks one row against two tokens at a time through the same loop, each token with its own
// four accumulators, so that it gives the rows kernel's bits; what the two tokens share is the
// weight block's load, magnitudes and scale.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "brick/quant/q8_0.hpp"
#include "core/simd_avx2.hpp"
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/weight_prefetch.hpp"

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

// The eight lanes of |w| . (x * sign(w)), products 4j..4j+3 in lane j: vpmaddubsw and vpmaddwd by
// ones (no pair saturates while x holds no -128).
inline __m256i signed_block_sum(__m256i magnitudes, __m256i signed_x) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(magnitudes, signed_x), _mm256_set1_epi16(1));
}

inline __m256 block_scale(const BlockQ80& w, const BlockQ80& x) { return _mm256_set1_ps(_cvtsh_ss(w.d) * _cvtsh_ss(x.d)); }

// d_w * d_x of blocks b..b+3 against each token, token k's in lanes 4k..4k+3 (one token: lanes 0-3),
// from one conversion of the fp16 scales; the same products as block_scale.
template <std::size_t kTokens>
inline __m256 four_block_scales(const BlockQ80* w, const BlockQ80* const (&x)[kTokens], std::size_t b) {
  const auto half = [](const BlockQ80& block) { return static_cast<short>(block.d); };
  if constexpr (kTokens == 1) {
    const __m256 d = _mm256_cvtph_ps(_mm_setr_epi16(half(w[b]), half(w[b + 1]), half(w[b + 2]), half(w[b + 3]),
                                                    half(x[0][b]), half(x[0][b + 1]), half(x[0][b + 2]),
                                                    half(x[0][b + 3])));
    return _mm256_castps128_ps256(_mm_mul_ps(_mm256_castps256_ps128(d), _mm256_extractf128_ps(d, 1)));
  } else {
    static_assert(kTokens == 2);
    const __m256 dx = _mm256_cvtph_ps(_mm_setr_epi16(half(x[0][b]), half(x[0][b + 1]), half(x[0][b + 2]),
                                                     half(x[0][b + 3]), half(x[1][b]), half(x[1][b + 1]),
                                                     half(x[1][b + 2]), half(x[1][b + 3])));
    const __m128 dw =
        _mm_cvtph_ps(_mm_setr_epi16(half(w[b]), half(w[b + 1]), half(w[b + 2]), half(w[b + 3]), 0, 0, 0, 0));
    return _mm256_mul_ps(_mm256_set_m128(dw, dw), dx);
  }
}

inline __m256 broadcast_lane(__m256 v, int lane) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(lane)); }

// Row w against each of kTokens activation rows, *out[k] for x[k]: four accumulators per token by
// block position, added (0 + 2) + (1 + 3). The tokens share each weight block's load, magnitudes and
// scale, so one call for two tokens gives each the bits of a call for it alone. kSigns: no x holds
// -128 (the vpmaddubsw products); with kTrack the element-wise minimum of x's quants is taken into
// *smallest as well.
template <bool kSigns, std::size_t kTokens, bool kTrack = false>
inline void dot_blocks(const BlockQ80* w, const BlockQ80* const (&x)[kTokens], std::size_t blocks,
                       float* const (&out)[kTokens], __m256i* smallest = nullptr) {
  __m256 acc[kTokens][4];
  for (auto& token : acc) {
    for (__m256& a : token) a = _mm256_setzero_ps();
  }
  const auto add = [&](std::size_t b, const __m256 (&scale)[kTokens], std::size_t i) {
    const __m256i wq = load_quants(w[b]);
    const __m256i magnitudes = _mm256_sign_epi8(wq, wq);
    for (std::size_t k = 0; k < kTokens; ++k) {
      const __m256i xq = load_quants(x[k][b]);
      if constexpr (kTrack) *smallest = _mm256_min_epi8(*smallest, xq);
      const __m256i sum = kSigns ? signed_block_sum(magnitudes, _mm256_sign_epi8(xq, wq)) : block_sum_widened(w[b], x[k][b]);
      acc[k][i] = _mm256_fmadd_ps(scale[k], _mm256_cvtepi32_ps(sum), acc[k][i]);
    }
  };
  // Four blocks per iteration, so that the accumulators stay in registers.
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    prefetch_weights_ahead<4 * sizeof(BlockQ80)>(w + b);
    const __m256 scales = four_block_scales<kTokens>(w, x, b);
    for (std::size_t i = 0; i < 4; ++i) {
      __m256 scale[kTokens];
      for (std::size_t k = 0; k < kTokens; ++k) scale[k] = broadcast_lane(scales, static_cast<int>(4 * k + i));
      add(b + i, scale, i);
    }
  }
  for (std::size_t i = 0; b + i < blocks; ++i) {
    __m256 scale[kTokens];
    for (std::size_t k = 0; k < kTokens; ++k) scale[k] = block_scale(w[b + i], x[k][b + i]);
    add(b + i, scale, i);
  }
  for (std::size_t k = 0; k < kTokens; ++k) {
    const __m256 total = _mm256_add_ps(_mm256_add_ps(acc[k][0], acc[k][2]), _mm256_add_ps(acc[k][1], acc[k][3]));
    *out[k] = simd::horizontal_sum(total);
  }
}

// Row w against one activation row x, of which `signs` says whether it holds no -128.
inline float dot_one(const BlockQ80* w, const BlockQ80* x, std::size_t blocks, bool signs) {
  float out = 0.0f;
  if (signs) {
    dot_blocks<true, 1>(w, {x}, blocks, {&out});
  } else {
    dot_blocks<false, 1>(w, {x}, blocks, {&out});
  }
  return out;
}

// About this many bytes of weight rows are walked against every token before the next rows: they
// stay in L2 while the tokens pass.
inline constexpr std::size_t kChunkBytes = 128 * 1024;

inline float dot_row(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) {
  __m256i smallest = _mm256_set1_epi8(127);
  float signs = 0.0f;
  dot_blocks<true, 1, true>(w, {x}, blocks, {&signs}, &smallest);
  return holds_minus128(smallest) ? dot_one(w, x, blocks, false) : signs;
}

inline void dot_rows(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t blocks, float* out) {
  const bool signs = signs_flip_exactly(x, blocks);
  for (std::size_t r = 0; r < rows; ++r) out[r] = dot_one(w + r * blocks, x, blocks, signs);
}

// Chunks of rows against the tokens two at a time (one token alone where it or its partner holds
// -128, and the last of an odd count); each chunk scans its tokens for -128 again, a pass over x
// that costs a small fraction of the chunk's rows.
inline void gemm(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t tokens, std::size_t blocks,
                 float* out, std::size_t out_stride) {
  const std::size_t chunk = std::max<std::size_t>(1, kChunkBytes / (blocks * sizeof(BlockQ80)));
  for (std::size_t first_row = 0; first_row < rows; first_row += chunk) {
    const std::size_t chunk_rows = std::min(chunk, rows - first_row);
    const BlockQ80* const chunk_w = w + first_row * blocks;
    for (std::size_t t = 0; t < tokens;) {
      const BlockQ80* const x0 = x + t * blocks;
      float* const out0 = out + t * out_stride + first_row;
      const bool signs = signs_flip_exactly(x0, blocks);
      if (signs && t + 1 < tokens && signs_flip_exactly(x0 + blocks, blocks)) {
        for (std::size_t r = 0; r < chunk_rows; ++r) {
          dot_blocks<true, 2>(chunk_w + r * blocks, {x0, x0 + blocks}, blocks, {out0 + r, out0 + out_stride + r});
        }
        t += 2;
        continue;
      }
      for (std::size_t r = 0; r < chunk_rows; ++r) out0[r] = dot_one(chunk_w + r * blocks, x0, blocks, signs);
      t += 1;
    }
  }
}

}  // namespace

float dot_q8_0_q8_0_avx2(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  return dot_row(w, x, blocks);
}

void dot_q8_0_q8_0_rows_avx2(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t blocks,
                             float* out) noexcept {
  dot_rows(w, rows, x, blocks, out);
}

void gemm_q8_0_q8_0_avx2(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t tokens,
                         std::size_t blocks, float* out, std::size_t out_stride) noexcept {
  gemm(w, rows, x, tokens, blocks, out, out_stride);
}

}  // namespace brick::quant::kernels
