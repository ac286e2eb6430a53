#pragma once
// Element-wise float vector arithmetic: axpy (y += alpha * x) and add (the residual connection).
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

// y[i] += alpha * x[i]. The SIMD backends use a fused multiply-add (one rounding), Scalar rounds
// the product and the sum separately, so they may differ by one rounding of the product. y must not
// partially overlap x (y == x is allowed). Throws InvalidArgument on size mismatch or partial
// overlap.
void axpy(float alpha, std::span<const float> x, std::span<float> y,
          Backend backend = Backend::Auto);

// out[i] = a[i] + b[i], bit-identical on every backend. out may be a or b itself (in-place residual
// add) but must not partially overlap either. Throws InvalidArgument on size mismatch or partial
// overlap. Empty spans are a no-op.
void add(std::span<const float> a, std::span<const float> b, std::span<float> out,
         Backend backend = Backend::Auto);

// The residual add of the hidden states of one or more tokens.
class AddOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> a;
    std::span<const float> b;
    std::size_t tokens = 1;  // rows in a and b, for the profile's per-token figures
  };

  explicit AddOp(BrickId id = BrickId::Residual, std::string label = "add")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input& input) const noexcept { return input.a.size(); }
  // `tokens` tokens, n FLOPs, 8n bytes read + 4n written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  // IEEE addition is exact-rounded on every backend: any difference is a bug.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 0.0, 0.0}; }
};

}  // namespace brick::ops
