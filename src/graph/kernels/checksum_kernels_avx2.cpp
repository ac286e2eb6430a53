#include <immintrin.h>

#define XXH_INLINE_ALL  // the library's XXH3, compiled here with AVX2
#include <xxhash.h>

#include "graph/kernels/checksum_kernels.hpp"

namespace brick::graph::kernels {

// The scalar lanes' arithmetic eight lanes at a time: lanes 0-3 and 4-7 in two double registers.
// min and max take the running value as the second operand, which they return on a tie, as the
// scalar compare keeps it (so a -0.0 after a 0.0 does not replace it).
void summary_lanes_avx2(const float* values, std::size_t blocks, SummaryLanes& lanes) noexcept {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  const __m256 minus_inf = _mm256_set1_ps(-__builtin_inff());
  __m256d sum_low = _mm256_loadu_pd(lanes.sum), sum_high = _mm256_loadu_pd(lanes.sum + 4);
  __m256d sq_low = _mm256_loadu_pd(lanes.squares), sq_high = _mm256_loadu_pd(lanes.squares + 4);
  __m256 low = _mm256_loadu_ps(lanes.low), high = _mm256_loadu_ps(lanes.high);
  __m256i counts_low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes.not_finite));
  __m256i counts_high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes.not_finite + 4));
  for (std::size_t b = 0; b < blocks; ++b) {
    const __m256 v = _mm256_loadu_ps(values + b * kSummaryLanes);
    const __m256 finite = _mm256_cmp_ps(_mm256_andnot_ps(sign, v), inf, _CMP_LT_OQ);
    const __m256 kept = _mm256_and_ps(v, finite);
    const __m256d d_low = _mm256_cvtps_pd(_mm256_castps256_ps128(kept));
    const __m256d d_high = _mm256_cvtps_pd(_mm256_extractf128_ps(kept, 1));
    sum_low = _mm256_add_pd(sum_low, d_low);
    sum_high = _mm256_add_pd(sum_high, d_high);
    sq_low = _mm256_add_pd(sq_low, _mm256_mul_pd(d_low, d_low));
    sq_high = _mm256_add_pd(sq_high, _mm256_mul_pd(d_high, d_high));
    low = _mm256_min_ps(_mm256_blendv_ps(inf, v, finite), low);
    high = _mm256_max_ps(_mm256_blendv_ps(minus_inf, v, finite), high);
    // An all-ones lane of the mask is -1: subtracting the mask of the non-finite lanes counts them.
    const __m256i bad = _mm256_castps_si256(_mm256_xor_ps(finite, _mm256_castsi256_ps(_mm256_set1_epi32(-1))));
    counts_low = _mm256_sub_epi64(counts_low, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(bad)));
    counts_high = _mm256_sub_epi64(counts_high, _mm256_cvtepi32_epi64(_mm256_extracti128_si256(bad, 1)));
  }
  _mm256_storeu_pd(lanes.sum, sum_low);
  _mm256_storeu_pd(lanes.sum + 4, sum_high);
  _mm256_storeu_pd(lanes.squares, sq_low);
  _mm256_storeu_pd(lanes.squares + 4, sq_high);
  _mm256_storeu_ps(lanes.low, low);
  _mm256_storeu_ps(lanes.high, high);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes.not_finite), counts_low);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes.not_finite + 4), counts_high);
}

std::uint64_t xxh3_64_avx2(const void* data, std::size_t bytes) noexcept { return XXH3_64bits(data, bytes); }

}  // namespace brick::graph::kernels
