#include "brick/ops/rms_norm.hpp"

#include <fmt/format.h>

#include <cmath>

#include "brick/core/error.hpp"
#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

struct RmsNormKernels {
  double (*sum_squares)(const float*, std::size_t) noexcept;
  void (*scale_mul)(const float*, float, const float*, float*, std::size_t) noexcept;
};

constexpr RmsNormKernels kScalar{kernels::sum_squares_f32_scalar, kernels::scale_mul_f32_scalar};
constexpr RmsNormKernels kAvx2{kernels::sum_squares_f32_avx2, kernels::scale_mul_f32_avx2};
constexpr RmsNormKernels kAvx512{kernels::sum_squares_f32_avx512, kernels::scale_mul_f32_avx512};

}  // namespace

void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
              std::span<float> out, Backend backend) {
  detail::require_not_empty("rms_norm", "x", x.size());
  detail::require_same_size("rms_norm", "weight", weight.size(), "x", x.size());
  detail::require_same_size("rms_norm", "out", out.size(), "x", x.size());
  detail::require_same_or_disjoint("rms_norm", "out", out, "x", x);
  detail::require_same_or_disjoint("rms_norm", "out", out, "weight", weight);
  if (!std::isfinite(eps) || eps < 0.0f) {
    throw InvalidArgument(
        fmt::format("rms_norm: eps is {}; it must be finite and not negative", eps));
  }
  const RmsNormKernels k = detail::pick(resolve(backend), kScalar, kAvx2, kAvx512);
  // ggml's arithmetic: the mean in double rounded to float, then 1/sqrt in float.
  const double sum = k.sum_squares(x.data(), x.size());
  const auto mean = static_cast<float>(sum / static_cast<double>(x.size()));
  const float scale = 1.0f / std::sqrt(mean + eps);
  k.scale_mul(x.data(), scale, weight.data(), out.data(), x.size());
}

OpCost RmsNormOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.x.size());
  return OpCost{1, 4.0 * n, 12.0 * n};
}

void RmsNormOp::run(const Input& input, std::span<float> out, Backend backend) const {
  rms_norm(input.x, input.weight, input.eps, out, backend);
}

}  // namespace brick::ops
