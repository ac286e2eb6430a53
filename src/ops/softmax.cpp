#include "brick/ops/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/dispatch.hpp"
#include "ops/kernels/f32_kernels.hpp"
#include "ops/validate.hpp"

namespace brick::ops {
namespace {

struct SoftmaxKernels {
  float (*max)(const float*, std::size_t) noexcept;
  double (*exp_shifted)(const float*, float, float*, std::size_t) noexcept;
  void (*scale)(float*, float, std::size_t) noexcept;
};

constexpr SoftmaxKernels kScalar{kernels::max_f32_scalar, kernels::exp_shifted_f32_scalar,
                                 kernels::scale_f32_scalar};
constexpr SoftmaxKernels kAvx2{kernels::max_f32_avx2, kernels::exp_shifted_f32_avx2,
                               kernels::scale_f32_avx2};
constexpr SoftmaxKernels kAvx512{kernels::max_f32_avx512, kernels::exp_shifted_f32_avx512,
                                 kernels::scale_f32_avx512};

}  // namespace

void softmax(std::span<const float> x, std::span<float> out, Backend backend) {
  detail::require_not_empty("softmax", "x", x.size());
  detail::require_same_size("softmax", "out", out.size(), "x", x.size());
  detail::require_same_or_disjoint("softmax", "out", out, "x", x);
  const SoftmaxKernels k = detail::pick(resolve(backend), kScalar, kAvx2, kAvx512);

  const float max = k.max(x.data(), x.size());
  if (max == -std::numeric_limits<float>::infinity()) {
    // Every entry is masked (or NaN): nothing to attend to gives zeros, a NaN poisons the row.
    const bool has_nan = std::any_of(x.begin(), x.end(), [](float v) { return std::isnan(v); });
    std::fill(out.begin(), out.end(), has_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
    return;
  }
  // ggml's arithmetic: the sum in double, its reciprocal rounded to float, one multiply each.
  const double sum = k.exp_shifted(x.data(), max, out.data(), x.size());
  k.scale(out.data(), static_cast<float>(1.0 / sum), x.size());
}

OpCost SoftmaxOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.x.size());
  return OpCost{1, 5.0 * n, 8.0 * n};
}

void SoftmaxOp::run(const Input& input, std::span<float> out, Backend backend) const {
  softmax(input.x, out, backend);
}

}  // namespace brick::ops
