#pragma once
// The gated activations of a llama-style feed-forward block: silu and swiglu = silu(gate) * up.
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

// out[i] = x[i] / (1 + exp(-x[i])), as ggml computes it. x below about -88.7 gives -0 (exp
// overflows to inf), -inf gives NaN (inf / inf), +inf gives +inf, NaN stays NaN. The SIMD backends
// use a vectorised exp within 2 ulp. out may be x itself but must not partially overlap it. Throws
// InvalidArgument on size mismatch or partial overlap.
void silu(std::span<const float> x, std::span<float> out, Backend backend = Backend::Auto);

// out[i] = silu(gate[i]) * up[i]. out may be gate or up itself but must not partially overlap
// either. Throws InvalidArgument on size mismatch or partial overlap.
void swiglu(std::span<const float> gate, std::span<const float> up, std::span<float> out,
            Backend backend = Backend::Auto);

// exp within 2 ulp, then one add, one divide (and one multiply for swiglu), each within half an
// ulp: outputs agree within ~4 ulp (rel 5e-7); rel 2e-6 leaves margin, abs 1e-30 forgives
// denormals.
inline constexpr double kActivationRelTolerance = 2e-6;
inline constexpr double kActivationAbsTolerance = 1e-30;

// silu over one token's feed-forward activations.
class SiluOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> x;
  };

  explicit SiluOp(BrickId id = BrickId::Activation, std::string label = "silu")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input& input) const noexcept { return input.x.size(); }
  // 1 token, 4n FLOPs (negate, exp counted as one, add, divide), 4n read + 4n written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  static Equivalence equivalence() noexcept {
    return {Backend::Scalar, kActivationAbsTolerance, kActivationRelTolerance};
  }
};

// swiglu over one token's gate and up projections.
class SwigluOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> gate;
    std::span<const float> up;
  };

  explicit SwigluOp(BrickId id = BrickId::Activation, std::string label = "swiglu")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input& input) const noexcept { return input.gate.size(); }
  // 1 token, 5n FLOPs (silu's four and the product), 8n read + 4n written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  static Equivalence equivalence() noexcept {
    return {Backend::Scalar, kActivationAbsTolerance, kActivationRelTolerance};
  }
};

}  // namespace brick::ops
