#pragma once
// The float matvec and w^T x over an F32Vector V (f32_vector.hpp), for matvec_f32_avx2.cpp and
// matvec_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its own
// copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/dot_f32_impl.hpp"
#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// One row after another: the weights stream through memory in a single sequential pass, which the
// hardware prefetchers follow best (measured: interleaving 2 or 4 rows to share x loads was slower,
// and x stays in L1 anyway).
template <F32Vector V>
inline void matvec_f32(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept {
  for (std::size_t r = 0; r < rows; ++r) y[r] = dot_f32<V>(w + r * cols, x, cols);
}

// Four vectors of y at a time accumulate down the rows (one broadcast of x[r], four loads and four
// FMAs per row), then one vector, then a masked tail.
template <F32Vector V>
inline void matvec_transposed_f32(const float* w, std::size_t rows, std::size_t cols,
                                  const float* x, float* y) noexcept {
  constexpr std::size_t kLanes = V::kLanes;
  std::size_t c = 0;
  for (; c + 4 * kLanes <= cols; c += 4 * kLanes) {
    typename V::Vec acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
    for (std::size_t r = 0; r < rows; ++r) {
      const auto xr = V::set1(x[r]);
      const float* row = w + r * cols + c;
      for (std::size_t k = 0; k < 4; ++k) acc[k] = V::fmadd(xr, V::load(row + k * kLanes), acc[k]);
    }
    for (std::size_t k = 0; k < 4; ++k) V::store(y + c + k * kLanes, acc[k]);
  }
  for (; c < cols; c += kLanes) {
    const auto mask = V::first(cols - c < kLanes ? cols - c : kLanes);
    auto acc = V::zero();
    for (std::size_t r = 0; r < rows; ++r)
      acc = V::fmadd(V::set1(x[r]), V::load(mask, w + r * cols + c), acc);
    V::store(mask, y + c, acc);
  }
}

}  // namespace
}  // namespace brick::ops::kernels
