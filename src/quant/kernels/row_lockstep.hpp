#pragma once
// A row kernel written as the walk of a Row: Row(w, x, blocks) starts a row, acc = row.group(b, acc)
// takes its blocks b..b+3, row.finish(b, acc) its last blocks from b on and returns the dot
// product; the accumulator (Row::Acc, zero to start) is the walk's, so that it stays in a register
// whatever the Row keeps in memory. walk_row() is the row kernel; four_runs_in_lockstep() walks
// four rows side by side, a group of each in turn, so that four streams of weights are read at
// once, and each row gets the row kernel's operations in its order, so its bits. On an Intel Xeon
// the AVX2 interleaved 14336x4096 mat-vecs from DRAM read 1.12-1.24x (Q4_K, Q5_K) and 1.00-1.13x
// (Q6_K) as fast in lockstep as a row of each run in turn, 86-93% of the read probe at 1 thread
// (bench/RESULTS.md); rows in L2 ran 0.71-0.89x as fast, so the rows kernels walk small matrices
// one row after another (quant/row_walk.hpp).
//
// Included by the kernel translation units; everything is in an anonymous namespace so that each
// keeps its own copy, compiled with its own flags.
#include <cstddef>

namespace brick::quant::kernels {
namespace {

template <class Row, class Block, class Activation>
inline float walk_row(const Block* w, const Activation* x, std::size_t blocks) {
  Row row(w, x, blocks);
  typename Row::Acc acc{};
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) acc = row.group(b, acc);
  return row.finish(b, acc);
}

// Four runs of `count` rows each, anywhere: row i of every run in lockstep; out[r][i] its result.
template <class Row, class Block, class Activation>
inline void four_runs_in_lockstep(const Block* const (&starts)[4], std::size_t count, const Activation* x,
                                  std::size_t blocks, float* const (&out)[4]) {
  for (std::size_t i = 0; i < count; ++i) {
    Row rows[4] = {Row(starts[0] + i * blocks, x, blocks), Row(starts[1] + i * blocks, x, blocks),
                   Row(starts[2] + i * blocks, x, blocks), Row(starts[3] + i * blocks, x, blocks)};
    typename Row::Acc acc[4] = {};
    std::size_t b = 0;
    for (; b + 4 <= blocks; b += 4) {
      for (std::size_t r = 0; r < 4; ++r) acc[r] = rows[r].group(b, acc[r]);
    }
    for (std::size_t r = 0; r < 4; ++r) out[r][i] = rows[r].finish(b, acc[r]);
  }
}

}  // namespace
}  // namespace brick::quant::kernels
