#pragma once
// How the AVX2 row dots prefetch their weights. In a mat-vec the rows lie one after another, so a
// row loop that prefetches a fixed distance ahead of its loads also brings in the start of the next
// row. The AVX2 k-quant dots are compute-bound at about half the read bandwidth, and the hardware
// prefetchers alone leave the lines a row loop waits on unrequested while it computes. On an Intel
// Xeon, prefetching into L2 8 KiB ahead made a 1.8 GB Q4_K_M model decode 1.07x (1 thread) and
// 1.12x (2 threads) faster (bench/RESULTS.md); the Q8_0 mat-vec from DRAM took 0.82x the time, Q6_K
// 0.96x, while a lone 14336x4096 Q4_K or Q5_K mat-vec took 1.08x; rows already in L1 or L2 take
// 2-10% longer. Into L1 the prefetch did less for Q6_K, whose misses then fill L1's line buffers.
// The AVX-512 row loops walk four runs of rows side by side instead (dot_kquant_avx512_impl.hpp),
// and the same prefetch there changed the model's decode by -3% to 0%.
#include <cstddef>

#include "brick/runtime/memory/prefetch.hpp"

namespace brick::quant::kernels {
namespace {

inline constexpr std::size_t kWeightPrefetchAhead = 8192;

// Prefetches into L2 the lines of [at + kWeightPrefetchAhead, + kBytes), for a loop that reads
// kBytes of weights from `at` per iteration. A range that starts inside a line may leave out its
// last line, which is the next iteration's first.
template <std::size_t kBytes>
inline void prefetch_weights_ahead(const void* at) {
  const char* ahead = static_cast<const char*>(at) + kWeightPrefetchAhead;
  for (std::size_t line = 0; line < kBytes; line += kCacheLineBytes) prefetch_read<Locality::Moderate>(ahead + line);
}

}  // namespace
}  // namespace brick::quant::kernels
