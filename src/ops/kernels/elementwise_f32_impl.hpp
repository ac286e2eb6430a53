#pragma once
// axpy and add over an F32Vector V (f32_vector.hpp), for elementwise_f32_avx2.cpp and
// elementwise_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its
// own copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

template <F32Vector V>
inline void axpy_f32(float alpha, const float* x, float* y, std::size_t n) noexcept {
  const auto a = V::set1(alpha);
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes)
    V::store(y + i, V::fmadd(a, V::load(x + i), V::load(y + i)));
  if (i < n) {
    const auto mask = V::first(n - i);
    V::store(mask, y + i, V::fmadd(a, V::load(mask, x + i), V::load(mask, y + i)));
  }
}

template <F32Vector V>
inline void add_f32(const float* a, const float* b, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes)
    V::store(out + i, V::add(V::load(a + i), V::load(b + i)));
  if (i < n) {
    const auto mask = V::first(n - i);
    V::store(mask, out + i, V::add(V::load(mask, a + i), V::load(mask, b + i)));
  }
}

}  // namespace
}  // namespace brick::ops::kernels
