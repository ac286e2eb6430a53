#pragma once
// The row walks of the dot kernels that compute R rows side by side: one row, four runs of rows
// anywhere, and a matrix's rows as four runs. They need nothing of an instruction set; each runs
// dot_side_by_side(kernel, rows, x, blocks, out) for R rows, which the file including this one
// defines for its kernels (dot_rows_avx512_impl.hpp for the AVX-512 ones). A kernel whose row's
// float operations are the same whatever R is gives the one-row kernel's bits in every walk.
// Everything here is in an anonymous namespace so that each translation unit keeps its own copy,
// compiled with its own flags.
#include <cstddef>

#include "quant/lockstep.hpp"

namespace brick::quant::kernels {
namespace {

template <class Kernel, class Weight, class Activation, std::size_t R>
void dot_side_by_side(const Kernel& kernel, const Weight* const (&rows)[R], const Activation* x,
                      std::size_t blocks, float* const (&out)[R]);

template <class Kernel, class Weight, class Activation>
inline float dot_row(const Kernel& kernel, const Weight* w, const Activation* x,
                     std::size_t blocks) {
  float out;
  const Weight* const rows[1] = {w};
  float* const outs[1] = {&out};
  dot_side_by_side(kernel, rows, x, blocks, outs);
  return out;
}

// Four runs of `count` consecutive rows, wherever each starts, walked side by side.
template <class Kernel, class Weight, class Activation>
inline void dot_four_runs_side_by_side(const Kernel& kernel, const Weight* const (&starts)[4],
                                       std::size_t count, const Activation* x, std::size_t blocks,
                                       float* const (&out)[4]) {
  for (std::size_t i = 0; i < count; ++i) {
    const Weight* const rows[4] = {starts[0] + i * blocks, starts[1] + i * blocks,
                                   starts[2] + i * blocks, starts[3] + i * blocks};
    float* const outs[4] = {out[0] + i, out[1] + i, out[2] + i, out[3] + i};
    dot_side_by_side(kernel, rows, x, blocks, outs);
  }
}

// The rows of a matrix as four runs of an odd number of rows walked side by side (four DRAM
// streams, see lockstep.hpp), then the rows past them one at a time.
template <class Kernel, class Weight, class Activation>
inline void dot_rows_in_four_runs(const Kernel& kernel, const Weight* w, std::size_t rows,
                                  const Activation* x, std::size_t blocks, float* out) {
  detail::in_four_runs(
      w, rows, blocks, out,
      [&](const Weight* const(&starts)[4], std::size_t run, float* const(&outs)[4]) {
        dot_four_runs_side_by_side(kernel, starts, run, x, blocks, outs);
      },
      [&](const Weight* row) { return dot_row(kernel, row, x, blocks); });
}

}  // namespace
}  // namespace brick::quant::kernels
