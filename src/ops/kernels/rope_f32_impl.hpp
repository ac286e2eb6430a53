#pragma once
// rope's two layouts over an F32Vector V (f32_vector.hpp), for rope_f32_avx2.cpp and
// rope_f32_avx512.cpp; in an anonymous namespace, so that each translation unit keeps its own
// copy, compiled with its own flags.
//
// Both compute a*cos - b*sin and a*sin + b*cos with separately rounded products (no FMA), exactly
// as the scalar reference rounds them, so the backends agree bit for bit. Whole vectors use plain
// loads and stores; only the tail is masked (AMD executes AVX2's masked stores slowly).
#include <cstddef>

#include "ops/kernels/f32_vector.hpp"

namespace brick::ops::kernels {
namespace {

// Adjacent pairs (x0, x1) rotated: c holds each pair's cosine in both its lanes, s its sine with
// the even lane (the pair's first element, which subtracts) negated.
template <F32Vector V>
inline typename V::Vec rotated_adjacent_pairs(typename V::Vec v, typename V::Vec c,
                                              typename V::Vec s) noexcept {
  return V::add(V::mul(v, c), V::mul(V::swap_pairs(v), s));
}

// Adjacent pairs of every head from `offset` on, read and written by load and store (whole or
// masked vectors).
template <F32Vector V, class Load, class Store>
inline void rotate_adjacent_pairs(float* out, const float* x, std::size_t n_heads,
                                  std::size_t head_dim, std::size_t offset, typename V::Vec c,
                                  typename V::Vec s, const Load& load,
                                  const Store& store) noexcept {
  for (std::size_t h = 0; h < n_heads; ++h) {
    store(out + h * head_dim + offset,
          rotated_adjacent_pairs<V>(load(x + h * head_dim + offset), c, s));
  }
}

template <F32Vector V>
inline void rope_norm_f32(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  constexpr std::size_t kPairsPerStep = V::kLanes / 2;
  std::size_t k = 0;
  for (; k + kPairsPerStep <= n_pairs; k += kPairsPerStep) {
    rotate_adjacent_pairs<V>(
        out, x, n_heads, head_dim, 2 * (first_pair + k), V::pairs_of(cos + k),
        V::negate_even(V::pairs_of(sin + k)), [](const float* p) { return V::load(p); },
        [](float* p, typename V::Vec v) { V::store(p, v); });
  }
  if (k < n_pairs) {
    const std::size_t pairs = n_pairs - k;
    const auto mask = V::first(2 * pairs);
    rotate_adjacent_pairs<V>(
        out, x, n_heads, head_dim, 2 * (first_pair + k), V::pairs_of(pairs, cos + k),
        V::negate_even(V::pairs_of(pairs, sin + k)),
        [mask](const float* p) { return V::load(mask, p); },
        [mask](float* p, typename V::Vec v) { V::store(mask, p, v); });
  }
}

// NeoX pairs (a, b) of every head from `offset` on, b half a head after a, read and written by
// load and store (whole or masked vectors).
template <F32Vector V, class Load, class Store>
inline void rotate_halves(float* out, const float* x, std::size_t n_heads, std::size_t head_dim,
                          std::size_t offset, typename V::Vec c, typename V::Vec s,
                          const Load& load, const Store& store) noexcept {
  const std::size_t half = head_dim / 2;
  for (std::size_t h = 0; h < n_heads; ++h) {
    const float* head = x + h * head_dim + offset;
    float* head_out = out + h * head_dim + offset;
    const auto a = load(head);
    const auto b = load(head + half);
    store(head_out, V::sub(V::mul(a, c), V::mul(b, s)));
    store(head_out + half, V::add(V::mul(a, s), V::mul(b, c)));
  }
}

template <F32Vector V>
inline void rope_neox_f32(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  std::size_t k = 0;
  for (; k + V::kLanes <= n_pairs; k += V::kLanes) {
    rotate_halves<V>(
        out, x, n_heads, head_dim, first_pair + k, V::load(cos + k), V::load(sin + k),
        [](const float* p) { return V::load(p); },
        [](float* p, typename V::Vec v) { V::store(p, v); });
  }
  if (k < n_pairs) {
    const auto mask = V::first(n_pairs - k);
    rotate_halves<V>(
        out, x, n_heads, head_dim, first_pair + k, V::load(mask, cos + k), V::load(mask, sin + k),
        [mask](const float* p) { return V::load(mask, p); },
        [mask](float* p, typename V::Vec v) { V::store(mask, p, v); });
  }
}

}  // namespace
}  // namespace brick::ops::kernels
