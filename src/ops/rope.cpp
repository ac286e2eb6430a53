#include "brick/ops/rope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "brick/core/error.hpp"
#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

using RopeKernel = void (*)(const float*, float*, std::size_t, std::size_t, const float*,
                            const float*, std::size_t, std::size_t) noexcept;

// Pairs whose cos/sin are tabulated at once, on the stack: covers every head_dim in use (<= 512)
// in one pass, and larger ones in several.
constexpr std::size_t kPairsPerChunk = 256;

void validate(std::span<const float> x, const RopeParams& params, std::span<const float> out) {
  if (params.head_dim == 0 || params.head_dim % 2 != 0) {
    throw InvalidArgument(
        fmt::format("rope: head_dim is {}; it must be even and positive", params.head_dim));
  }
  detail::require_not_empty("rope", "x", x.size());
  if (x.size() % params.head_dim != 0) {
    throw InvalidArgument(fmt::format("rope: x has {} elements, not a whole number of heads of {}",
                                      x.size(), params.head_dim));
  }
  if (!std::isfinite(params.freq_base) || params.freq_base <= 0.0f) {
    throw InvalidArgument(
        fmt::format("rope: freq_base is {}; it must be finite and positive", params.freq_base));
  }
  detail::require_same_size("rope", "out", out.size(), "x", x.size());
  detail::require_same_or_disjoint("rope", "out", out, "x", x);
}

}  // namespace

void rope(std::span<const float> x, const RopeParams& params, std::span<float> out,
          Backend backend) {
  validate(x, params, out);
  const Backend concrete = resolve(backend);
  const RopeKernel kernel =
      params.layout == RopeLayout::Normal
          ? detail::pick<RopeKernel>(concrete, kernels::rope_norm_f32_scalar,
                                     kernels::rope_norm_f32_avx2, kernels::rope_norm_f32_avx512)
          : detail::pick<RopeKernel>(concrete, kernels::rope_neox_f32_scalar,
                                     kernels::rope_neox_f32_avx2, kernels::rope_neox_f32_avx512);

  const std::size_t n_heads = x.size() / params.head_dim;
  const std::size_t n_pairs = params.head_dim / 2;
  // ggml's angles: theta_0 = position, theta_{i+1} = theta_i * freq_base^(-2/head_dim), in float.
  const float theta_scale = std::pow(params.freq_base, -2.0f / static_cast<float>(params.head_dim));
  float theta = static_cast<float>(params.position);
  std::array<float, kPairsPerChunk> cos_table;
  std::array<float, kPairsPerChunk> sin_table;
  for (std::size_t first = 0; first < n_pairs; first += kPairsPerChunk) {
    const std::size_t count = std::min(kPairsPerChunk, n_pairs - first);
    for (std::size_t k = 0; k < count; ++k) {
      cos_table[k] = std::cos(theta);
      sin_table[k] = std::sin(theta);
      theta *= theta_scale;
    }
    kernel(x.data(), out.data(), n_heads, params.head_dim, cos_table.data(), sin_table.data(),
           first, count);
  }
}

OpCost RopeOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(output_size(input));
  const auto pairs = static_cast<double>(input.params.head_dim / 2 * input.tokens);
  return OpCost{input.tokens, 3.0 * n + 2.0 * pairs, 8.0 * n};
}

void RopeOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t width = row_width(input);
  const std::size_t stride = input.tokens == 0 ? 0 : input.x.size() / input.tokens;
  if (input.tokens == 0 || input.x.size() % input.tokens != 0 || width == 0 || width > stride ||
      out.size() != input.tokens * width) {
    throw InvalidArgument(fmt::format("{}: {} values are not {} rows of at least {}, or the output holds {} "
                                      "instead of {}",
                                      name(), input.x.size(), input.tokens, width, out.size(), input.tokens * width));
  }
  RopeParams params = input.params;
  for (std::size_t t = 0; t < input.tokens; ++t) {
    params.position = input.params.position + t;
    rope(input.x.subspan(t * stride, width), params, out.subspan(t * width, width), backend);
  }
}

}  // namespace brick::ops
