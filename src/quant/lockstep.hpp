#pragma once
// How far apart the rows walked in lockstep lie. A mat-vec reads several far-apart runs of rows side
// by side to keep more DRAM streams in flight; if the runs start a multiple of a large power of two
// apart, every stream maps to the same memory channel (or cache sets) at the same time. On the Zen 4
// development machine (12-channel EPYC), a Q5_K 6144x4096 mat-vec read 14.4 GB/s at 1 thread with
// runs of 1536 rows (4.125 MiB = 33 x 2^17 bytes apart) and 25.6 GB/s with runs of 1537; runs 3, 9
// or 15 x 2^15 bytes apart read 16-20 GB/s against 23-26 for their neighbours. An odd number of
// rows per run keeps the spacing's power of two that of one row (2^8 bytes for a 4096-wide Q5_K
// row, 2^5 for Q6_K).
#include <cstddef>

namespace brick::quant::detail {

// The rows per run when `rows` rows are walked as `runs` runs side by side: rows / runs, made odd
// by taking one row less when it is even (the rows past runs * run follow one at a time).
constexpr std::size_t lockstep_run(std::size_t rows, std::size_t runs) noexcept {
  const std::size_t run = rows / runs;
  return run % 2 == 0 && run > 0 ? run - 1 : run;
}

}  // namespace brick::quant::detail
