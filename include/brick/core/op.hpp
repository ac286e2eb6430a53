#pragma once
// What an op must say about itself to become a brick. An op is a small value type with an Input
// (usually a struct of spans) that writes float outputs into a caller-provided span.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"

namespace brick {

// The work one call does: what the profiler and graph turn into tokens/s, GB/s, GFLOP/s and an
// arithmetic intensity.
struct OpCost {
  std::uint64_t tokens = 1;  // tokens (or elements, for element-wise ops) processed by one call
  double flops = 0.0;
  double bytes = 0.0;  // bytes read plus bytes written

  constexpr double arithmetic_intensity() const noexcept { return bytes > 0 ? flops / bytes : 0.0; }
};

// run() receives a concrete backend (never Auto), must write exactly output_size(input) floats, and
// may throw InvalidArgument for inputs outside its domain (mismatched sizes, empty spans).
template <class Op>
concept BrickOp = requires(const Op& op, const typename Op::Input& input, std::span<float> out,
                           Backend backend) {
  typename Op::Input;
  { op.name() } -> std::convertible_to<std::string_view>;
  { op.id() } -> std::same_as<BrickId>;
  { op.output_size(input) } -> std::convertible_to<std::size_t>;
  { op.cost(input) } -> std::same_as<OpCost>;
  { op.run(input, out, backend) } -> std::same_as<void>;
};

}  // namespace brick
