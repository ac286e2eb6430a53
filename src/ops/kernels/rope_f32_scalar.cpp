#include "ops/kernels/f32_kernels.hpp"

namespace brick::ops::kernels {
namespace {

// Every backend rounds exactly these products and sums, in this order, so they agree bit for bit.
void rotate(float xa, float xb, float cos, float sin, float& out_a, float& out_b) noexcept {
  out_a = xa * cos - xb * sin;
  out_b = xa * sin + xb * cos;
}

}  // namespace

void rope_norm_f32_scalar(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  for (std::size_t h = 0; h < n_heads; ++h) {
    const float* head = x + h * head_dim;
    float* head_out = out + h * head_dim;
    for (std::size_t k = 0; k < n_pairs; ++k) {
      const std::size_t a = 2 * (first_pair + k);
      const float xa = head[a];
      const float xb = head[a + 1];
      rotate(xa, xb, cos[k], sin[k], head_out[a], head_out[a + 1]);
    }
  }
}

void rope_neox_f32_scalar(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept {
  const std::size_t half = head_dim / 2;
  for (std::size_t h = 0; h < n_heads; ++h) {
    const float* head = x + h * head_dim;
    float* head_out = out + h * head_dim;
    for (std::size_t k = 0; k < n_pairs; ++k) {
      const std::size_t a = first_pair + k;
      const float xa = head[a];
      const float xb = head[a + half];
      rotate(xa, xb, cos[k], sin[k], head_out[a], head_out[a + half]);
    }
  }
}

}  // namespace brick::ops::kernels
