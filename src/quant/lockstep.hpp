#pragma once
// How far apart the rows walked in lockstep lie. A mat-vec reads several far-apart runs of rows side
// by side to keep more DRAM streams in flight; if the runs start a multiple of a large power of two
// apart, every stream maps to the same memory channel (or cache sets) at the same time, and the
// mat-vec reads at about half the bandwidth (the stride measurements are in bench/RESULTS.md). An
// odd number of rows per run keeps the spacing's power of two that of one row (2^8 bytes for a
// 4096-wide Q5_K row, 2^5 for Q6_K).
#include <cstddef>

namespace brick::quant::detail {

// The rows per run when `rows` rows are walked as `runs` runs side by side: rows / runs, made odd
// by taking one row less when it is even (the rows past runs * run follow one at a time).
constexpr std::size_t lockstep_run(std::size_t rows, std::size_t runs) noexcept {
  const std::size_t run = rows / runs;
  return run % 2 == 0 && run > 0 ? run - 1 : run;
}

// A matrix's rows (`rows` of `blocks` blocks from w, results to out) as four runs of
// lockstep_run(rows, 4) rows, given to four_runs(starts, run, outs) to walk side by side, then the
// rows past them one at a time, out[r] = row(w + r * blocks).
template <class Weight, class FourRuns, class Row>
inline void in_four_runs(const Weight* w, std::size_t rows, std::size_t blocks, float* out, FourRuns&& four_runs,
                         Row&& row) {
  const std::size_t run = lockstep_run(rows, 4);
  const Weight* const starts[4] = {w, w + run * blocks, w + 2 * run * blocks, w + 3 * run * blocks};
  float* const outs[4] = {out, out + run, out + 2 * run, out + 3 * run};
  four_runs(starts, run, outs);
  for (std::size_t r = 4 * run; r < rows; ++r) out[r] = row(w + r * blocks);
}

}  // namespace brick::quant::detail
