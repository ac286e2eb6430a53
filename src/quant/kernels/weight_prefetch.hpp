#pragma once
// How the row dots prefetch their weights (the AVX2 ones, and the AVX-512 k-quant rows walked one
// after another). In a mat-vec the rows lie one after another, so a row loop that prefetches a
// fixed distance ahead of its loads also brings in the start of the next row; the hardware
// prefetchers alone leave the lines a row loop waits on unrequested while it computes. On an Intel
// Xeon, prefetching into L2 8 KiB ahead made a 1.8 GB Q4_K_M model decode 1.07x (1 thread) and
// 1.12x (2 threads) faster (bench/RESULTS.md); rows already in L1 or L2 take 2-10% longer. With the
// interleaved kernels the 14336x4096 mat-vecs from DRAM run 1.01-1.14x (Q4_K), 0.95-1.08x (Q5_K)
// and 1.12-1.17x (Q6_K) as fast with it as without, grouped Q8_0 0.91-1.02x (the plain Q8_0
// kernel, before the grouped layout, took 0.82x the time). Into L1 the prefetch did less for Q6_K,
// whose misses then fill L1's line buffers.
// On Zen 5, rows one after another (quant/row_walk.hpp), the interleaved Q4_K and Q6_K mat-vecs
// and the fused QKV ran 1.11-1.14x as fast with it as without (AVX2), Q5_K as fast.
// The AVX-512 k-quant rows kernels walk four runs of rows side by side on Intel
// (dot_kquant_avx512_impl.hpp), where the same prefetch changed the model's decode by -3% to 0%,
// and one row after another with it elsewhere (quant/row_walk.hpp).
#include <algorithm>
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

// The next chunk of a GEMM's weight rows, prefetched into L2 a slice per step while the current
// chunk is computed. A GEMM walks a chunk of rows against every tile of tokens, and its first pass
// over the next chunk (unpacking it, or computing its block terms) would otherwise wait on memory;
// the steps are fine-grained (a group or a few blocks of a row pass) so that the prefetches do not
// come in bursts. On an Intel Xeon, alternated with a build without it, at batch 32 over a
// 14336x4096 matrix: Q8_0 1.21x (AVX-512 VNNI) and 1.28x (AVX-VNNI), Q4_K and Q6_K 1.12-1.13x
// (AVX-512 VNNI) and 1.08-1.09x (AVX2); over 4096 rows and at batch 512 within 3% either way. One
// step per row pass instead, in bursts, made the AVX-512 VNNI Q8_0 GEMM 0.88x as fast at batch 512.
class NextChunkPrefetch {
 public:
  // [begin, begin + bytes), spread over `steps` calls of step().
  NextChunkPrefetch(const void* begin, std::size_t bytes, std::size_t steps)
      : next_(static_cast<const char*>(begin)),
        end_(next_ + bytes),
        slice_((bytes + std::max<std::size_t>(steps, 1) - 1) / std::max<std::size_t>(steps, 1)) {}

  void step() {
    const auto left = static_cast<std::size_t>(end_ - next_);
    const std::size_t bytes = std::min(slice_, left);
    if (bytes == 0) return;
    prefetch_range<Locality::Moderate>(next_, bytes);
    next_ += bytes;
  }

 private:
  const char* next_;
  const char* end_;
  std::size_t slice_;
};

}  // namespace
}  // namespace brick::quant::kernels
