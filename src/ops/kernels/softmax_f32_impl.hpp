#pragma once
// softmax's three passes over an F32Vector V (f32_vector.hpp), for softmax_f32_avx2.cpp and
// softmax_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its own
// copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

template <F32Vector V>
inline float max_f32(const float* x, std::size_t n) noexcept {
  constexpr std::size_t kLanes = V::kLanes;
  const auto neg_inf = V::set1(-__builtin_inff());
  // max(v, acc) returns acc when v is NaN: NaN is skipped, as in the scalar reference.
  auto acc0 = neg_inf;
  auto acc1 = neg_inf;
  std::size_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    acc0 = V::max(V::load(x + i), acc0);
    acc1 = V::max(V::load(x + i + kLanes), acc1);
  }
  for (; i + kLanes <= n; i += kLanes) acc0 = V::max(V::load(x + i), acc0);
  if (i < n) acc1 = V::max(V::load_or(V::first(n - i), x + i, neg_inf), acc1);
  return V::largest(V::max(acc0, acc1));
}

template <F32Vector V>
inline double exp_shifted_f32(const float* x, float shift, float* out, std::size_t n) noexcept {
  const auto s = V::set1(shift);
  auto low = V::zero_doubles();
  auto high = V::zero_doubles();
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const auto e = V::exp(V::sub(V::load(x + i), s));
    V::store(out + i, e);
    V::accumulate_as_double(e, low, high);
  }
  if (i < n) {
    const auto mask = V::first(n - i);
    const auto e = V::keep(mask, V::exp(V::sub(V::load(mask, x + i), s)));
    V::store(mask, out + i, e);
    V::accumulate_as_double(e, low, high);
  }
  return V::sum(V::add(low, high));
}

template <F32Vector V>
inline void scale_f32(float* x, float scale, std::size_t n) noexcept {
  const auto s = V::set1(scale);
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) V::store(x + i, V::mul(V::load(x + i), s));
  if (i < n) {
    const auto mask = V::first(n - i);
    V::store(mask, x + i, V::mul(V::load(mask, x + i), s));
  }
}

}  // namespace
}  // namespace brick::ops::kernels
