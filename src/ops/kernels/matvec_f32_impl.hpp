#pragma once
// The float matvec and w^T x over an F32Vector V (f32_vector.hpp), for matvec_f32_avx2.cpp and
// matvec_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its own
// copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/dot_f32_impl.hpp"
#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// Rows of kSteps * 4 vectors (an attention head's 64 or 128 keys against a query): x is loaded once
// (held in registers where they suffice) and each row is dot_f32's main loop, its kSteps steps
// spelled out, with no tail to test for, so the same FMAs and sum give the same bits. dot_f32 per
// row spent more on loading x again, its loop and its tail tests than on its four FMAs a step:
// eight queries against 512 and 2048 keys ran 1.5x (64 values) and 1.2-1.7x (128) as fast with
// AVX-512 on Zen 5, 2.0x and 1.4-1.6x with AVX2.
template <F32Vector V, std::size_t kSteps>
inline void matvec_short_rows_f32(const float* w, std::size_t rows, const float* x, float* y) noexcept {
  constexpr std::size_t kLanes = V::kLanes;
  constexpr std::size_t kCols = kSteps * 4 * kLanes;
  typename V::Vec xs[kSteps * 4];
  for (std::size_t k = 0; k < kSteps * 4; ++k) xs[k] = V::load(x + k * kLanes);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* const row = w + r * kCols;
    typename V::Vec acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
    for (std::size_t step = 0; step < kSteps; ++step) {
      for (std::size_t k = 0; k < 4; ++k) {
        acc[k] = V::fmadd(V::load(row + (4 * step + k) * kLanes), xs[4 * step + k], acc[k]);
      }
    }
    y[r] = V::sum(V::add(V::add(acc[0], acc[1]), V::add(acc[2], acc[3])));
  }
}

// One row after another: the weights stream through memory in a single sequential pass, which the
// hardware prefetchers follow best (measured: interleaving 2 or 4 rows to share x loads was slower,
// and x stays in L1 anyway).
template <F32Vector V>
inline void matvec_f32(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  // Rows of 4, 8 or 16 vectors.
  if (cols == 4 * V::kLanes) return matvec_short_rows_f32<V, 1>(w, rows, x, y);
  if (cols == 8 * V::kLanes) return matvec_short_rows_f32<V, 2>(w, rows, x, y);
  if (cols == 16 * V::kLanes) return matvec_short_rows_f32<V, 4>(w, rows, x, y);
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot_f32<V>(w + r * cols, x, cols);
}

// M rows of x against w: four vectors of each y row at a time accumulate down w's rows (one load
// of four vectors of w, M broadcasts and 4M FMAs per row of w), then one vector, then a masked tail.
// Every y[m][c] adds the rows in order with one FMA each, whatever M is.
template <F32Vector V, std::size_t M>
inline void rows_times_matrix(const float* w, std::size_t rows, std::size_t cols, const float* x, float* y) noexcept {
  constexpr std::size_t kLanes = V::kLanes;
  std::size_t c = 0;
  for (; c + 4 * kLanes <= cols; c += 4 * kLanes) {
    typename V::Vec acc[M][4];
    for (auto& row_acc : acc) {
      for (auto& a : row_acc) a = V::zero();
    }
    for (std::size_t r = 0; r < rows; ++r) {
      const float* row = w + r * cols + c;
      typename V::Vec wr[4];
      for (std::size_t k = 0; k < 4; ++k) wr[k] = V::load(row + k * kLanes);
      for (std::size_t m = 0; m < M; ++m) {
        const auto xr = V::set1(x[m * rows + r]);
        for (std::size_t k = 0; k < 4; ++k) acc[m][k] = V::fmadd(xr, wr[k], acc[m][k]);
      }
    }
    for (std::size_t m = 0; m < M; ++m) {
      for (std::size_t k = 0; k < 4; ++k) V::store(y + m * cols + c + k * kLanes, acc[m][k]);
    }
  }
  for (; c < cols; c += kLanes) {
    const auto mask = V::first(cols - c < kLanes ? cols - c : kLanes);
    typename V::Vec acc[M];
    for (auto& a : acc) a = V::zero();
    for (std::size_t r = 0; r < rows; ++r) {
      const auto wr = V::load(mask, w + r * cols + c);
      for (std::size_t m = 0; m < M; ++m) acc[m] = V::fmadd(V::set1(x[m * rows + r]), wr, acc[m]);
    }
    for (std::size_t m = 0; m < M; ++m) V::store(mask, y + m * cols + c, acc[m]);
  }
}

// y = x w for `count` rows of x (rows values each) and of y (cols each): the rows of x four at a
// time, then two, then one, so that each load of w feeds up to sixteen FMA chains. One row of an
// attention head's 64 values (four vectors of 16) kept four chains, and the FMAs waited on their
// latency: eight rows against 512 and 2048 value rows ran 2.5x as fast on Zen 5 (AVX-512, 64 values;
// 3.6-3.8x at 128) and 1.3-1.9x with AVX2, where sixteen accumulators spill a few.
template <F32Vector V>
inline void matvec_transposed_f32(const float* w, std::size_t rows, std::size_t cols, const float* x, std::size_t count,
                                  float* y) noexcept {
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) rows_times_matrix<V, 4>(w, rows, cols, x + i * rows, y + i * cols);
  if (i + 2 <= count) {
    rows_times_matrix<V, 2>(w, rows, cols, x + i * rows, y + i * cols);
    i += 2;
  }
  if (i < count) rows_times_matrix<V, 1>(w, rows, cols, x + i * rows, y + i * cols);
}

}  // namespace
}  // namespace brick::ops::kernels
