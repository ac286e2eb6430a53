#include "brick/ops/activation.hpp"

#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

using SiluKernel = void (*)(const float*, float*, std::size_t) noexcept;
using SwigluKernel = void (*)(const float*, const float*, float*, std::size_t) noexcept;

}  // namespace

void silu(std::span<const float> x, std::span<float> out, Backend backend) {
  detail::require_same_size("silu", "out", out.size(), "x", x.size());
  detail::require_same_or_disjoint("silu", "out", out, "x", x);
  const SiluKernel kernel = detail::pick<SiluKernel>(
      resolve(backend), kernels::silu_f32_scalar, kernels::silu_f32_avx2, kernels::silu_f32_avx512);
  kernel(x.data(), out.data(), x.size());
}

void swiglu(std::span<const float> gate, std::span<const float> up, std::span<float> out,
            Backend backend) {
  detail::require_same_size("swiglu", "up", up.size(), "gate", gate.size());
  detail::require_same_size("swiglu", "out", out.size(), "gate", gate.size());
  detail::require_same_or_disjoint("swiglu", "out", out, "gate", gate);
  detail::require_same_or_disjoint("swiglu", "out", out, "up", up);
  const SwigluKernel kernel =
      detail::pick<SwigluKernel>(resolve(backend), kernels::swiglu_f32_scalar,
                                 kernels::swiglu_f32_avx2, kernels::swiglu_f32_avx512);
  kernel(gate.data(), up.data(), out.data(), gate.size());
}

OpCost SiluOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.x.size());
  return OpCost{1, 4.0 * n, 8.0 * n};
}

void SiluOp::run(const Input& input, std::span<float> out, Backend backend) const {
  silu(input.x, out, backend);
}

OpCost SwigluOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.gate.size());
  return OpCost{1, 5.0 * n, 12.0 * n};
}

void SwigluOp::run(const Input& input, std::span<float> out, Backend backend) const {
  swiglu(input.gate, input.up, out, backend);
}

}  // namespace brick::ops
