#pragma once
// rms_norm's two passes over an F32Vector V (f32_vector.hpp), for rms_norm_f32_avx2.cpp and
// rms_norm_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its own
// copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// Two vectors per step into four double accumulators: the adds' latency, not the loads, bounds
// this loop, so it needs independent chains.
template <F32Vector V>
inline double sum_squares_f32(const float* x, std::size_t n) noexcept {
  constexpr std::size_t kLanes = V::kLanes;
  auto low0 = V::zero_doubles();
  auto high0 = V::zero_doubles();
  auto low1 = V::zero_doubles();
  auto high1 = V::zero_doubles();
  std::size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const auto v0 = V::load(x + i);
    const auto v1 = V::load(x + i + kLanes);
    V::accumulate_as_double(V::mul(v0, v0), low0, high0);
    V::accumulate_as_double(V::mul(v1, v1), low1, high1);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const auto v = V::load(x + i);
    V::accumulate_as_double(V::mul(v, v), low0, high0);
  }
  if (i < n) {
    const auto v = V::load(V::first(n - i), x + i);
    V::accumulate_as_double(V::mul(v, v), low1, high1);
  }
  return V::sum(V::add(V::add(low0, high0), V::add(low1, high1)));
}

template <F32Vector V>
inline void scale_mul_f32(const float* x, float scale, const float* w, float* out,
                          std::size_t n) noexcept {
  const auto s = V::set1(scale);
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes)
    V::store(out + i, V::mul(V::mul(V::load(x + i), s), V::load(w + i)));
  if (i < n) {
    const auto mask = V::first(n - i);
    V::store(mask, out + i, V::mul(V::mul(V::load(mask, x + i), s), V::load(mask, w + i)));
  }
}

}  // namespace
}  // namespace brick::ops::kernels
