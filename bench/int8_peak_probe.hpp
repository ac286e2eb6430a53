#pragma once
// The machine's integer dot-product peak, measured the way the benchmarks judge a quantized GEMM
// against it: on every pool thread, 12 independent accumulator chains of the instructions the GEMM
// kernels multiply bytes with, on registers only (no loads), for a fixed number of iterations; the
// median of the passes counts. An int8 multiply-add is 2 operations, so a GEMM's GFLOP/s divided by
// the peak's GOPS is the fraction of the peak it runs at.
// - avx512vnni: vpdpbusd zmm, 64 multiply-adds per instruction.
// - avxvnni: vpdpbusd ymm, 32 multiply-adds per instruction.
// - avx2: vpmaddubsw + vpmaddwd + vpaddd ymm, 32 multiply-adds per three instructions (the AVX2
//   k-quant GEMMs' mix: their quants are unsigned).
// - avx2 signed: vpsignb + vpmaddubsw + vpmaddwd + vpaddd ymm, 32 multiply-adds per four
//   instructions: Q8_0's quants are signed on both sides, and vpmaddubsw takes one operand
//   unsigned, so the AVX2 Q8_0 GEMM (as ggml's) moves the signs of one side onto the other first.
// Each chain's product takes one operand from the chain's own accumulator: with both operands fixed
// the compiler computes the product once, outside the loop, and the loop measures vpaddd alone.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "brick/core/cpu_features.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::bench {

inline constexpr int kPeakChains = 12;
inline constexpr std::size_t kPeakIterations = 1u << 20;

// Multiply-adds done; the accumulators go into `sink` so that nothing is left out.
__attribute__((target("avx512f,avx512vnni"))) inline double vnni_chains(std::int32_t& sink) {
  __m512i acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_set1_epi32(c);
  const __m512i a = _mm512_set1_epi8(3);
  const __m512i b = _mm512_set1_epi8(-5);
  for (std::size_t i = 0; i < kPeakIterations; ++i) {
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm512_dpbusd_epi32(acc[c], a, b);
  }
  __m512i total = acc[0];
  for (int c = 1; c < kPeakChains; ++c) total = _mm512_add_epi32(total, acc[c]);
  alignas(64) std::int32_t lanes[16];
  _mm512_store_si512(lanes, total);
  for (const std::int32_t lane : lanes) sink += lane;
  return 64.0 * kPeakChains * static_cast<double>(kPeakIterations);
}

__attribute__((target("avx2,avxvnni"))) inline double avxvnni_chains(std::int32_t& sink) {
  __m256i acc[kPeakChains];
  for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_set1_epi32(c);
  const __m256i a = _mm256_set1_epi8(3);
  const __m256i b = _mm256_set1_epi8(-5);
  for (std::size_t i = 0; i < kPeakIterations; ++i) {
    for (int c = 0; c < kPeakChains; ++c) acc[c] = _mm256_dpbusd_avx_epi32(acc[c], a, b);
  }
  __m256i total = acc[0];
  for (int c = 1; c < kPeakChains; ++c) total = _mm256_add_epi32(total, acc[c]);
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  for (const std::int32_t lane : lanes) sink += lane;
  return 32.0 * kPeakChains * static_cast<double>(kPeakIterations);
}

// The AVX2 mixes' chains: 12, enough on every core here (a chain's unsigned mix takes 11 cycles on
// Intel cores and 7 on Zen 3, in which the two ports that multiply finish 11 or 7 products; the
// signed mix 12 cycles, in which they finish 8). One asm statement per iteration holds all of them,
// so that the compiler neither computes products outside the loop nor keeps accumulators on the
// stack (with intrinsics GCC spilled some, adding a store and a load to their chains). `a` is both
// the unsigned bytes of vpmaddubsw and the int16 operand of vpmaddwd; ymm15 holds each product.
inline constexpr int kAvx2Chains = 12;

// One chain's product of the unsigned mix (operand 12 is `a`) and of the signed one (13 is `b`).
#define BRICK_PEAK_UNSIGNED(c)         \
  "vpmaddubsw %" #c                    \
  ", %12, %%ymm15\n\t"                 \
  "vpmaddwd %12, %%ymm15, %%ymm15\n\t" \
  "vpaddd %%ymm15, %" #c ", %" #c "\n\t"
#define BRICK_PEAK_SIGNED(c)             \
  "vpsignb %" #c                         \
  ", %13, %%ymm15\n\t"                   \
  "vpmaddubsw %%ymm15, %12, %%ymm15\n\t" \
  "vpmaddwd %12, %%ymm15, %%ymm15\n\t"   \
  "vpaddd %%ymm15, %" #c ", %" #c "\n\t"
#define BRICK_PEAK_CHAINS(chain) \
  chain(0) chain(1) chain(2) chain(3) chain(4) chain(5) chain(6) chain(7) chain(8) chain(9) chain(10) chain(11)

// kSigned: the signed mix (vpsignb first), else the unsigned one.
template <bool kSigned>
__attribute__((target("avx2"))) inline double avx2_chains(std::int32_t& sink) {
  __m256i c0 = _mm256_set1_epi32(0), c1 = _mm256_set1_epi32(1), c2 = _mm256_set1_epi32(2), c3 = _mm256_set1_epi32(3),
          c4 = _mm256_set1_epi32(4), c5 = _mm256_set1_epi32(5), c6 = _mm256_set1_epi32(6), c7 = _mm256_set1_epi32(7),
          c8 = _mm256_set1_epi32(8), c9 = _mm256_set1_epi32(9), c10 = _mm256_set1_epi32(10),
          c11 = _mm256_set1_epi32(11);
  const __m256i a = _mm256_set1_epi8(3);
  const __m256i b = _mm256_set1_epi8(-5);
  for (std::size_t i = 0; i < kPeakIterations; ++i) {
    if constexpr (kSigned) {
      asm(BRICK_PEAK_CHAINS(BRICK_PEAK_SIGNED)
          : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6), "+x"(c7), "+x"(c8), "+x"(c9),
            "+x"(c10), "+x"(c11)
          : "x"(a), "x"(b)
          : "xmm15");
    } else {
      asm(BRICK_PEAK_CHAINS(BRICK_PEAK_UNSIGNED)
          : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6), "+x"(c7), "+x"(c8), "+x"(c9),
            "+x"(c10), "+x"(c11)
          : "x"(a), "x"(b)
          : "xmm15");
    }
  }
  const __m256i total =
      _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                                        _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7))),
                       _mm256_add_epi32(_mm256_add_epi32(c8, c9), _mm256_add_epi32(c10, c11)));
  alignas(32) std::int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), total);
  for (const std::int32_t lane : lanes) sink += lane;
  return 32.0 * kAvx2Chains * static_cast<double>(kPeakIterations);
}

#undef BRICK_PEAK_CHAINS
#undef BRICK_PEAK_SIGNED
#undef BRICK_PEAK_UNSIGNED

enum class Int8Instructions { Avx2, Avx2Signed, AvxVnni, Avx512Vnni };

inline const char* describe(Int8Instructions instructions) {
  switch (instructions) {
    case Int8Instructions::Avx2: return "vpmaddubsw + vpmaddwd ymm";
    case Int8Instructions::Avx2Signed:
      return "vpsignb + vpmaddubsw + vpmaddwd ymm";
    case Int8Instructions::AvxVnni: return "vpdpbusd ymm";
    case Int8Instructions::Avx512Vnni: return "vpdpbusd zmm";
  }
  return "";
}

// GOPS (2 per int8 multiply-add) of `instructions` on every thread of `pool`: the median of
// `repetitions` passes; nothing when the CPU lacks them.
inline std::optional<double> int8_peak_gops(Int8Instructions instructions, ThreadPool& pool, int repetitions = 5) {
  const CpuFeatures& cpu = cpu_features();
  if (instructions == Int8Instructions::Avx512Vnni && !(cpu.avx512f && cpu.avx512vnni)) return std::nullopt;
  if (instructions == Int8Instructions::AvxVnni && !(cpu.avx2 && cpu.avxvnni)) return std::nullopt;
  if ((instructions == Int8Instructions::Avx2 || instructions == Int8Instructions::Avx2Signed) && !cpu.avx2) {
    return std::nullopt;
  }
  const auto chains = [instructions](std::int32_t& sink) {
    switch (instructions) {
      case Int8Instructions::Avx512Vnni: return vnni_chains(sink);
      case Int8Instructions::AvxVnni: return avxvnni_chains(sink);
      case Int8Instructions::Avx2Signed:
        return avx2_chains<true>(sink);
      case Int8Instructions::Avx2: break;
    }
    return avx2_chains<false>(sink);
  };
  std::vector<double> rates;
  std::int32_t sink[64] = {};
  for (int r = 0; r < repetitions; ++r) {
    std::vector<double> done(pool.size(), 0.0);
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(pool.size(), [&](Range range, std::size_t slot) {
      for (std::size_t i = range.begin; i < range.end; ++i) done[slot] += chains(sink[slot % 64]);
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double total = 0.0;
    for (const double d : done) total += d;
    rates.push_back(2.0 * total / seconds / 1e9);
  }
  volatile std::int32_t keep = sink[0];
  (void)keep;
  std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace brick::bench
