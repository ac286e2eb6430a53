#pragma once
// RMS normalisation with a learned weight, as llama.cpp applies it (ggml_rms_norm then ggml_mul).
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

// out[i] = (x[i] * scale) * weight[i] with scale = 1 / sqrt(mean(x^2) + eps); the squares are
// rounded to float and summed in double on every backend, so backends agree to within an ulp or
// two. out may be x itself but must not partially overlap x or weight. Throws InvalidArgument when
// x is empty, the sizes differ, eps is negative or not finite, or the spans partially overlap.
void rms_norm(std::span<const float> x, std::span<const float> weight, float eps,
              std::span<float> out, Backend backend = Backend::Auto);

// Normalises the hidden states of one or more tokens: x holds whole rows of weight.size() values,
// each normalised on its own (InvalidArgument otherwise).
class RmsNormOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> x;
    std::span<const float> weight;
    float eps = 1e-6f;
  };

  explicit RmsNormOp(BrickId id = BrickId::RmsNorm, std::string label = "rms_norm")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input& input) const noexcept { return input.x.size(); }
  // One token per row, 4n FLOPs (square, sum, scale, weight), 8n bytes read (x, weight) + 4n
  // written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  // Same float products, double sums in a different order, same final roundings: a double-rounding
  // tie can move the scale by one ulp, so outputs agree within 2 ulp (rel 2.4e-7); rel 1e-6 leaves
  // margin, abs 1e-30 only forgives denormal outputs.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 1e-30, 1e-6}; }
};

}  // namespace brick::ops
