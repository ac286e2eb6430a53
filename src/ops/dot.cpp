#include "brick/ops/dot.hpp"

#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

using DotKernel = float (*)(const float*, const float*, std::size_t) noexcept;

}  // namespace

float dot(std::span<const float> a, std::span<const float> b, Backend backend) {
  detail::require_same_size("dot", "b", b.size(), "a", a.size());
  const DotKernel kernel = detail::pick<DotKernel>(resolve(backend), kernels::dot_f32_scalar,
                                                   kernels::dot_f32_avx2, kernels::dot_f32_avx512);
  return kernel(a.data(), b.data(), a.size());
}

OpCost DotOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.a.size());
  return OpCost{1, 2.0 * n, 8.0 * n + 4.0};
}

void DotOp::run(const Input& input, std::span<float> out, Backend backend) const {
  detail::require_same_size(name(), "output", out.size(), "the dot product", 1);
  out[0] = dot(input.a, input.b, backend);
}

}  // namespace brick::ops
