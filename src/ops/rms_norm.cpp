#include "brick/ops/rms_norm.hpp"

#include <fmt/format.h>

#include <algorithm>
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
  const std::size_t rows = input.weight.empty() ? 1 : std::max<std::size_t>(1, input.x.size() / input.weight.size());
  return OpCost{rows, 4.0 * n, 12.0 * n};
}

void RmsNormOp::run(const Input& input, std::span<float> out, Backend backend) const {
  const std::size_t width = input.weight.size();
  if (width == 0 || input.x.size() % width != 0 || out.size() != input.x.size()) {
    throw InvalidArgument(fmt::format("{}: {} values are not whole rows of the {}-value weight, or the output "
                                      "holds {}",
                                      name(), input.x.size(), width, out.size()));
  }
  for (std::size_t row = 0; row < input.x.size() / width; ++row) {
    rms_norm(input.x.subspan(row * width, width), input.weight, input.eps, out.subspan(row * width, width), backend);
  }
}

}  // namespace brick::ops
