#pragma once
// Rotary position embedding (RoPE) of one token's heads, in ggml's two layouts.
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

enum class RopeLayout : unsigned char {
  Normal,  // rotates adjacent pairs (2i, 2i+1): GGML_ROPE_TYPE_NORM (llama, mistral)
  NeoX,    // rotates pairs (i, i + head_dim/2): GGML_ROPE_TYPE_NEOX (qwen2, phi, gpt-neox)
};

struct RopeParams {
  std::size_t head_dim = 0;  // even, > 0
  std::size_t position = 0;  // the token's position in the sequence
  float freq_base = 10000.0f;
  RopeLayout layout = RopeLayout::Normal;
};

// For every head and pair i in [0, head_dim/2): theta_i = position * freq_base^(-2i/head_dim) and
//   out[a] = x[a] * cos(theta_i) - x[b] * sin(theta_i)
//   out[b] = x[a] * sin(theta_i) + x[b] * cos(theta_i)
// with (a, b) = (2i, 2i+1) for Normal and (i, i + head_dim/2) for NeoX. theta_i is formed as ggml
// forms it (the float position times powf(freq_base, -2/head_dim) raised pair by pair) and cos/sin
// come from libm's cosf/sinf once per call, so every backend rotates with the same table and the
// results are bit-identical across backends. x holds n_heads * head_dim floats; out may be x itself
// but must not partially overlap it. Throws InvalidArgument when head_dim is zero or odd, x is
// empty or not a multiple of head_dim, freq_base is not finite and positive, sizes differ, or the
// spans partially overlap.
void rope(std::span<const float> x, const RopeParams& params, std::span<float> out,
          Backend backend = Backend::Auto);

// Rotates the query or key heads of one or more consecutive tokens: token t sits at position
// params.position + t, its row starts at t * (x.size() / tokens), and its first `width` values (all
// of the row when 0) are rotated into row t of the output (tokens * width values). Rows can so hold
// more than the heads (Q and K rotated from rows of Q, K and V).
class RopeOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> x;
    RopeParams params;
    std::size_t tokens = 1;
    std::size_t width = 0;
  };

  explicit RopeOp(BrickId id = BrickId::RopeEmbedding, std::string label = "rope")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input& input) const noexcept { return input.tokens * row_width(input); }
  // `tokens` tokens, 3n FLOPs (4 multiplies and 2 adds per pair) plus 2 per pair of the cos/sin
  // table, 4n read + 4n written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  // Same table, same multiplies and subtractions in the same order, no fused multiply-add: every
  // backend is bit-identical, so any difference is a bug.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 0.0, 0.0}; }

 private:
  static std::size_t row_width(const Input& input) noexcept {
    return input.width > 0 ? input.width : (input.tokens == 0 ? 0 : input.x.size() / input.tokens);
  }
};

}  // namespace brick::ops
