#pragma once
// The row loop of the AVX-512 Q8_0, F16 and BF16 dot kernels: R rows walked side by side, each
// step's activation loaded once for all of them, every row accumulating in 2 * kVectors zmm of float
// lanes (kVectors per step, alternate steps in alternate sets, so that the FMA chains are short)
// summed at the end. A row's float operations are the same whatever R is, so the rows and
// four-runs kernels give the one-row kernel's bits. Everything here is in an anonymous namespace so
// that each translation unit keeps its own copy, compiled with its own flags.
//
// A Kernel provides: kStep (blocks per step) and kVectors; activation(x) -> A, the activation side
// of blocks x[0..kStep); accumulate(w, a, acc) adding the step's products with w[0..kStep) to the
// kVectors accumulators acc; and for a last partial step of `left` < kStep blocks,
// activation_tail(x, left) and accumulate_tail(w, a, acc, left), which read nothing past
// x[left - 1] and w[left - 1]. A Kernel with a row loop of its own provides instead
// side_by_side(rows, x, blocks, out) for R rows, with the same property.
#include <cstddef>

#include "core/simd_avx512.hpp"
#include "quant/kernels/dot_rows_in_runs.hpp"

namespace brick::quant::kernels {
namespace {

// How far ahead of a row's loads each iteration prefetches it, every line. The hardware prefetchers
// alone keep too few lines in flight at these formats' byte rate, and 2 KiB ahead brings F16, Q8_0
// and BF16 mat-vecs closest to the read probe (bench/RESULTS.md). The k-quant kernels read fewer
// bytes per value and do not prefetch: on Zen 4 it made them slower.
inline constexpr std::size_t kPrefetchAhead = 2048;

template <class Kernel, class Weight, class Activation, std::size_t R>
inline void dot_in_steps(const Kernel& kernel, const Weight* const (&rows)[R], const Activation* x,
                         std::size_t blocks, float* const (&out)[R]) {
  constexpr std::size_t kStep = Kernel::kStep;
  constexpr std::size_t kVectors = Kernel::kVectors;
  // Two steps per iteration, one per set of accumulators: indexing the sets by a step counter would
  // keep them in memory.
  __m512 even[R][kVectors];
  __m512 odd[R][kVectors];
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t v = 0; v < kVectors; ++v) even[r][v] = odd[r][v] = _mm512_setzero_ps();
  }
  std::size_t b = 0;
  for (; b + 2 * kStep <= blocks; b += 2 * kStep) {
    for (std::size_t r = 0; r < R; ++r) {
      const char* ahead = reinterpret_cast<const char*>(rows[r] + b) + kPrefetchAhead;
      for (std::size_t line = 0; line < 2 * kStep * sizeof(Weight); line += 64) _mm_prefetch(ahead + line, _MM_HINT_T0);
    }
    const auto first = kernel.activation(x + b);
    const auto second = kernel.activation(x + b + kStep);
    for (std::size_t r = 0; r < R; ++r) kernel.accumulate(rows[r] + b, first, even[r]);
    for (std::size_t r = 0; r < R; ++r) kernel.accumulate(rows[r] + b + kStep, second, odd[r]);
  }
  if (b + kStep <= blocks) {
    const auto a = kernel.activation(x + b);
    for (std::size_t r = 0; r < R; ++r) kernel.accumulate(rows[r] + b, a, even[r]);
    b += kStep;
  }
  if (b < blocks) {
    const std::size_t left = blocks - b;
    const auto a = kernel.activation_tail(x + b, left);
    for (std::size_t r = 0; r < R; ++r) kernel.accumulate_tail(rows[r] + b, a, odd[r], left);
  }
  for (std::size_t r = 0; r < R; ++r) {
    __m512 sum = _mm512_add_ps(even[r][0], odd[r][0]);
    for (std::size_t v = 1; v < kVectors; ++v) sum = _mm512_add_ps(sum, _mm512_add_ps(even[r][v], odd[r][v]));
    *out[r] = _mm512_reduce_add_ps(sum);
  }
}

// The R rows of dot_rows_in_runs.hpp's walks.
template <class Kernel, class Weight, class Activation, std::size_t R>
void dot_side_by_side(const Kernel& kernel, const Weight* const (&rows)[R], const Activation* x, std::size_t blocks,
                      float* const (&out)[R]) {
  if constexpr (requires { kernel.side_by_side(rows, x, blocks, out); }) {
    kernel.side_by_side(rows, x, blocks, out);
  } else {
    dot_in_steps(kernel, rows, x, blocks, out);
  }
}

}  // namespace
}  // namespace brick::quant::kernels
