#include <cmath>

#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {
namespace {

float silu(float x) noexcept {
  return x / (1.0f + std::exp(-x));
}

}  // namespace

void silu_f32_scalar(const float* x, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = silu(x[i]);
}

void swiglu_f32_scalar(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = silu(gate[i]) * up[i];
}

}  // namespace brick::ops::kernels
