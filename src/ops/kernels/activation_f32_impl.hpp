#pragma once
// silu and swiglu over an F32Vector V (f32_vector.hpp), for activation_f32_avx2.cpp and
// activation_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its
// own copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// x / (1 + exp(-x)) with a true division, as the scalar reference computes it.
template <F32Vector V>
inline typename V::Vec silu_lanes(typename V::Vec x) noexcept {
  return V::div(x, V::add(V::set1(1.0f), V::template exp</*kNegate=*/true>(x)));
}

template <F32Vector V>
inline void silu_f32(const float* x, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) V::store(out + i, silu_lanes<V>(V::load(x + i)));
  if (i < n) {
    const auto mask = V::first(n - i);
    V::store(mask, out + i, silu_lanes<V>(V::load(mask, x + i)));
  }
}

template <F32Vector V>
inline void swiglu_f32(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    V::store(out + i, V::mul(silu_lanes<V>(V::load(gate + i)), V::load(up + i)));
  }
  if (i < n) {
    const auto mask = V::first(n - i);
    V::store(mask, out + i, V::mul(silu_lanes<V>(V::load(mask, gate + i)), V::load(mask, up + i)));
  }
}

}  // namespace
}  // namespace brick::ops::kernels
