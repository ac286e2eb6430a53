#pragma once
// What the float-op bodies (<family>_f32_impl.hpp) need of a vector of floats, so that each op is
// written once and compiled per instruction set: F32x8 (simd_avx2.hpp) in the *_avx2.cpp files,
// F32x16 (simd_avx512.hpp) in the *_avx512.cpp files. Each keeps its instruction set's choices
// (AVX2's vmaskmovps tails, AVX-512's lane masks and reductions) behind the same names.
#include <concepts>
#include <cstddef>

namespace brick::ops::kernels {

template <class V>
concept F32Vector = requires(typename V::Vec a, typename V::Doubles d, typename V::Mask m,
                             float* out, const float* in, std::size_t n) {
  { V::kLanes } -> std::convertible_to<std::size_t>;
  // Whole vectors.
  { V::zero() } -> std::same_as<typename V::Vec>;
  { V::set1(1.0f) } -> std::same_as<typename V::Vec>;
  { V::load(in) } -> std::same_as<typename V::Vec>;
  V::store(out, a);
  // The first n lanes (n <= kLanes): masked-off lanes are neither read nor written, and load
  // zeroes them (load_or fills them, keep zeroes them).
  { V::first(n) } -> std::same_as<typename V::Mask>;
  { V::load(m, in) } -> std::same_as<typename V::Vec>;
  { V::load_or(m, in, a) } -> std::same_as<typename V::Vec>;
  V::store(m, out, a);
  { V::keep(m, a) } -> std::same_as<typename V::Vec>;
  // Lane-wise arithmetic, each result rounded once (fmadd: a * b + c).
  { V::add(a, a) } -> std::same_as<typename V::Vec>;
  { V::sub(a, a) } -> std::same_as<typename V::Vec>;
  { V::mul(a, a) } -> std::same_as<typename V::Vec>;
  { V::div(a, a) } -> std::same_as<typename V::Vec>;
  { V::fmadd(a, a, a) } -> std::same_as<typename V::Vec>;
  { V::max(a, a) } -> std::same_as<typename V::Vec>;
  { V::template exp<true>(a) } -> std::same_as<typename V::Vec>;
  // Across the lanes.
  { V::sum(a) } -> std::same_as<float>;
  { V::largest(a) } -> std::same_as<float>;
  // Sums in double: kLanes / 2 doubles per register.
  { V::zero_doubles() } -> std::same_as<typename V::Doubles>;
  { V::add(d, d) } -> std::same_as<typename V::Doubles>;
  { V::sum(d) } -> std::same_as<double>;
  V::accumulate_as_double(a, d, d);
  // Adjacent pairs of lanes, for rope.
  { V::pairs_of(in) } -> std::same_as<typename V::Vec>;
  { V::pairs_of(n, in) } -> std::same_as<typename V::Vec>;
  { V::swap_pairs(a) } -> std::same_as<typename V::Vec>;
  { V::negate_even(a) } -> std::same_as<typename V::Vec>;
};

}  // namespace brick::ops::kernels
