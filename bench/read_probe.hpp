#pragma once
// Reading from DRAM, measured the way the benchmarks judge a mat-vec against it. The probe reads a
// buffer of at least 256 MiB and twice the L3 (written first, so the reads reach memory) as 2, 4
// and 8 interleaved sequential streams per thread with the widest loads the CPU has, each with and
// without software prefetch 8 KiB ahead into L2; the best of the six counts. Where the hardware
// prefetchers keep too few lines in flight, a kernel that prefetches would otherwise read faster
// than the probe. Working sets that must come from DRAM are sized from the L3 the same way: a VM
// can report its host's whole L3 (480 MiB on an Intel Xeon guest), and three 33 MB copies of a
// matrix then stay in it.
#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "brick/core/cpu_features.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/memory/aligned_buffer.hpp"

namespace brick::bench {

// The L3 as the OS reports it, 32 MiB where it reports none.
inline std::size_t l3_cache_bytes() {
  const long bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return bytes > 0 ? static_cast<std::size_t>(bytes) : std::size_t{32} << 20;
}

// How many copies of a working set of `bytes`, used in turn, come from DRAM rather than the L3:
// together at least twice the L3, and at least `least`.
inline std::size_t dram_copies(std::size_t bytes, std::size_t least) {
  return std::max(least, (2 * l3_cache_bytes() + bytes - 1) / bytes);
}

inline constexpr std::size_t kProbeStreams[] = {2, 4, 8};
inline constexpr std::size_t kProbePrefetchAhead = 8192;

// With kPrefetch, the line kProbePrefetchAhead bytes past p into L2.
template <bool kPrefetch>
inline void prefetch_probe_line(const __m128i* p) {
  if constexpr (kPrefetch) {
    _mm_prefetch(reinterpret_cast<const char*>(p) + kProbePrefetchAhead, _MM_HINT_T1);
  }
}

template <std::size_t kStreams, bool kPrefetch>
__attribute__((target("avx512f"))) std::int64_t read_sum_avx512(const __m128i* p,
                                                                std::size_t vectors) {
  const std::size_t per_stream = vectors / kStreams / 4 * 4;
  __m512i acc[kStreams] = {};
  for (std::size_t i = 0; i < per_stream; i += 4) {
    for (std::size_t s = 0; s < kStreams; ++s) {
      prefetch_probe_line<kPrefetch>(p + s * per_stream + i);
      acc[s] = _mm512_add_epi64(
          acc[s], _mm512_loadu_si512(static_cast<const void*>(p + s * per_stream + i)));
    }
  }
  __m512i total = _mm512_setzero_si512();
  for (const __m512i& a : acc) total = _mm512_add_epi64(total, a);
  alignas(64) std::int64_t lanes[8];
  _mm512_store_si512(lanes, total);
  std::int64_t sum = 0;
  for (std::int64_t lane : lanes) sum += lane;
  return sum;
}

template <std::size_t kStreams, bool kPrefetch>
std::int64_t read_sum_sse2(const __m128i* p, std::size_t vectors) {
  const std::size_t per_stream = vectors / kStreams / 4 * 4;
  __m128i acc[kStreams] = {};
  for (std::size_t i = 0; i < per_stream; i += 4) {
    for (std::size_t s = 0; s < kStreams; ++s) {
      const __m128i* q = p + s * per_stream + i;
      prefetch_probe_line<kPrefetch>(q);
      acc[s] = _mm_add_epi64(
          acc[s], _mm_add_epi64(_mm_add_epi64(_mm_loadu_si128(q), _mm_loadu_si128(q + 1)),
                                _mm_add_epi64(_mm_loadu_si128(q + 2), _mm_loadu_si128(q + 3))));
    }
  }
  __m128i total = _mm_setzero_si128();
  for (const __m128i& a : acc) total = _mm_add_epi64(total, a);
  return _mm_cvtsi128_si64(total) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(total, total));
}

// Reads `vectors` 16-byte vectors from p as kStreams interleaved sequential streams.
template <std::size_t kStreams, bool kPrefetch>
std::int64_t read_sum(const __m128i* p, std::size_t vectors) {
  static const bool wide = cpu_features().avx512f;
  return wide ? read_sum_avx512<kStreams, kPrefetch>(p, vectors)
              : read_sum_sse2<kStreams, kPrefetch>(p, vectors);
}

class ReadProbe {
 public:
  // The probe's buffer size: 256 MiB or twice the L3, in whole MiB.
  static std::size_t bytes() {
    constexpr std::size_t kMiB = std::size_t{1} << 20;
    return std::max(256 * kMiB, (2 * l3_cache_bytes() + kMiB - 1) / kMiB * kMiB);
  }

  // `storage` holds at least bytes() (ordinary or huge pages, as the caller's weights have).
  explicit ReadProbe(AlignedBuffer storage = AlignedBuffer::page_aligned(bytes()))
      : storage_(std::move(storage)), bytes_(bytes()) {
    std::memset(storage_.data(), 1, bytes_);
  }

  // One pass over the buffer split across the pool's threads.
  template <std::size_t kStreams, bool kPrefetch>
  std::int64_t pass(ThreadPool& pool) const {
    const auto* data = reinterpret_cast<const __m128i*>(storage_.data());
    const std::size_t vectors = bytes_ / sizeof(__m128i);
    std::int64_t sink[64] = {};
    pool.parallel_for(vectors / 64, [&](Range range, std::size_t slot) {
      sink[slot % 64] += read_sum<kStreams, kPrefetch>(data + range.begin * 64, range.size() * 64);
    });
    std::int64_t total = 0;
    for (std::int64_t s : sink) total += s;
    return total;
  }

  // GB/s: the median of `repetitions` passes for each probe, the best probe.
  double gb_per_second(ThreadPool& pool, int repetitions = 5) const {
    return std::max({passes<2, false>(pool, repetitions), passes<4, false>(pool, repetitions),
                     passes<8, false>(pool, repetitions), passes<2, true>(pool, repetitions),
                     passes<4, true>(pool, repetitions), passes<8, true>(pool, repetitions)});
  }

 private:
  template <std::size_t kStreams, bool kPrefetch>
  double passes(ThreadPool& pool, int repetitions) const {
    std::vector<double> rates;
    std::int64_t sink = 0;
    for (int r = 0; r < repetitions; ++r) {
      const auto start = std::chrono::steady_clock::now();
      sink += pass<kStreams, kPrefetch>(pool);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      rates.push_back(static_cast<double>(bytes_) / seconds / 1e9);
    }
    volatile std::int64_t keep = sink;
    (void)keep;
    std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2),
                     rates.end());
    return rates[rates.size() / 2];
  }

  AlignedBuffer storage_;
  std::size_t bytes_;
};

}  // namespace brick::bench
