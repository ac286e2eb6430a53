#pragma once
// Loop unrolling for kernels: how many independent blocks each SIMD level keeps in flight, and a
// helper that calls a body in compile-time-unrolled groups followed by the leftover.
//
// Plain header (only <cstddef>, <type_traits>, <utility>): per-ISA kernel translation units may
// include it. Pass lambdas as bodies: their types are unique to the translation unit, so the
// instantiations compiled with ISA flags cannot be shared with baseline code by the linker.
#include <cstddef>
#include <type_traits>
#include <utility>

namespace brick {

enum class SimdLevel : unsigned char { Scalar, Sse, Avx2, Avx512 };

// Independent accumulators per loop iteration: enough to cover FMA latency x throughput with the
// register file of each level (32 zmm, 16 ymm/xmm).
constexpr std::size_t unroll_factor(SimdLevel level) noexcept {
  switch (level) {
    case SimdLevel::Avx512: return 8;
    case SimdLevel::Avx2: return 4;
    case SimdLevel::Sse: return 2;
    case SimdLevel::Scalar: return 1;
  }
  return 1;
}

namespace detail {

template <class Body>
constexpr void call_body(Body& body, std::size_t i, std::size_t lane) {
  if constexpr (std::is_invocable_v<Body&, std::size_t, std::size_t>) {
    body(i, lane);
  } else {
    body(i);
  }
}

template <std::size_t Step, class Body, std::size_t... Lanes>
constexpr void call_unrolled(Body& body, std::size_t i, std::index_sequence<Lanes...>) {
  (call_body(body, i + Lanes * Step, Lanes), ...);
}

}  // namespace detail

// Calls block(i, lane) (or block(i)) for i = 0, Step, 2*Step, ... while i + Step <= n, in order.
// Groups of Unroll blocks are unrolled at compile time; lane is the block's index modulo Unroll, so
// a kernel can keep Unroll separate accumulators and index them by lane. When n is not a multiple of
// Step, tail(i, n - i) is called once at the end for the last partial block.
template <std::size_t Step, std::size_t Unroll, class Block, class Tail>
constexpr void unroll_blocks(std::size_t n, Block&& block, Tail&& tail) {
  static_assert(Step >= 1 && Unroll >= 1);
  constexpr std::size_t group = Step * Unroll;
  std::size_t i = 0;
  for (; n - i >= group; i += group) {
    detail::call_unrolled<Step>(block, i, std::make_index_sequence<Unroll>{});
  }
  for (std::size_t lane = 0; n - i >= Step; i += Step, ++lane) detail::call_body(block, i, lane);
  if (i < n) tail(i, n - i);
}

// Calls body(i, lane) (or body(i)) for every i in [0, n), in order, Unroll calls per unrolled group,
// with lane = i % Unroll.
template <std::size_t Unroll, class Body>
constexpr void unroll(std::size_t n, Body&& body) {
  unroll_blocks<1, Unroll>(n, body, [](std::size_t, std::size_t) {});
}

}  // namespace brick
