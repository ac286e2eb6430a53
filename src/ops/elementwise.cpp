#include "brick/ops/elementwise.hpp"

#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

using AxpyKernel = void (*)(float, const float*, float*, std::size_t) noexcept;
using AddKernel = void (*)(const float*, const float*, float*, std::size_t) noexcept;

}  // namespace

void axpy(float alpha, std::span<const float> x, std::span<float> y, Backend backend) {
  detail::require_same_size("axpy", "y", y.size(), "x", x.size());
  detail::require_same_or_disjoint("axpy", "y", y, "x", x);
  const AxpyKernel kernel = detail::pick<AxpyKernel>(
      resolve(backend), kernels::axpy_f32_scalar, kernels::axpy_f32_avx2, kernels::axpy_f32_avx512);
  kernel(alpha, x.data(), y.data(), x.size());
}

void add(std::span<const float> a, std::span<const float> b, std::span<float> out,
         Backend backend) {
  detail::require_same_size("add", "b", b.size(), "a", a.size());
  detail::require_same_size("add", "out", out.size(), "a", a.size());
  detail::require_same_or_disjoint("add", "out", out, "a", a);
  detail::require_same_or_disjoint("add", "out", out, "b", b);
  const AddKernel kernel = detail::pick<AddKernel>(resolve(backend), kernels::add_f32_scalar,
                                                   kernels::add_f32_avx2, kernels::add_f32_avx512);
  kernel(a.data(), b.data(), out.data(), a.size());
}

OpCost AddOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.a.size());
  return OpCost{input.tokens, n, 12.0 * n};
}

void AddOp::run(const Input& input, std::span<float> out, Backend backend) const {
  add(input.a, input.b, out, backend);
}

}  // namespace brick::ops
