#pragma once
// The float dot product over an F32Vector V (f32_vector.hpp), for the dot and matvec files of each
// instruction set, so that a matvec row equals dot(row, x) bit for bit; in an anonymous namespace,
// so that each translation unit keeps its own copy, compiled with its own flags.
#include <cstddef>

#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// Four accumulators hide the FMA latency; the tail is one masked load, no scalar loop.
template <F32Vector V>
inline float dot_f32(const float* a, const float* b, std::size_t n) noexcept {
  constexpr std::size_t kLanes = V::kLanes;
  auto acc0 = V::zero();
  auto acc1 = V::zero();
  auto acc2 = V::zero();
  auto acc3 = V::zero();
  std::size_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    acc0 = V::fmadd(V::load(a + i), V::load(b + i), acc0);
    acc1 = V::fmadd(V::load(a + i + kLanes), V::load(b + i + kLanes), acc1);
    acc2 = V::fmadd(V::load(a + i + 2 * kLanes), V::load(b + i + 2 * kLanes), acc2);
    acc3 = V::fmadd(V::load(a + i + 3 * kLanes), V::load(b + i + 3 * kLanes), acc3);
  }
  for (; i + kLanes <= n; i += kLanes) acc0 = V::fmadd(V::load(a + i), V::load(b + i), acc0);
  if (i < n) {
    const auto mask = V::first(n - i);
    acc1 = V::fmadd(V::load(mask, a + i), V::load(mask, b + i), acc1);
  }
  return V::sum(V::add(V::add(acc0, acc1), V::add(acc2, acc3)));
}

}  // namespace
}  // namespace brick::ops::kernels
