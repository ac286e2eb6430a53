#pragma once
// How the AVX2 row dots prefetch the weights. In a mat-vec the rows lie one after another, so a row
// loop that prefetches a fixed distance ahead of its loads also brings in the start of the next
// row. The hardware prefetchers alone leave the AVX2 k-quant mat-vecs at about half the read
// bandwidth, being compute-bound for each line they wait on; prefetching into L2 8 KiB ahead took
// them to 0.61-0.76x the time on an Intel Xeon (Q8_0's 0.88-0.94x) and costs 2-10% for rows
// already in L1 or L2 (bench/RESULTS.md). Into L1 the same prefetch did less for Q6_K, whose
// misses then fill L1's line buffers.
#include <immintrin.h>

#include <cstddef>

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kAvx2PrefetchAhead = 8192;

// Prefetches into L2 the lines of [at + kAvx2PrefetchAhead, + kBytes), for a loop that reads kBytes
// of weights from `at` per iteration. A range that starts inside a line may leave out its last
// line, which is the next iteration's first.
template <std::size_t kBytes>
inline void prefetch_ahead_avx2(const void* at) {
  const char* ahead = static_cast<const char*>(at) + kAvx2PrefetchAhead;
  for (std::size_t line = 0; line < kBytes; line += 64) _mm_prefetch(ahead + line, _MM_HINT_T1);
}

}  // namespace
}  // namespace brick::quant::kernels
