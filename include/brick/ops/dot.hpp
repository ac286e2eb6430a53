#pragma once
// Dot product of two float vectors.
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

// sum_i a[i] * b[i]. The Scalar reference multiplies in float and accumulates in double (as ggml's
// generic path does); the SIMD backends accumulate in float over several independent vector
// accumulators, so they differ from Scalar by a rounding error that grows with n and with
// sum_i |a[i] * b[i]|. An empty pair of spans gives 0. Throws InvalidArgument when the sizes
// differ.
float dot(std::span<const float> a, std::span<const float> b, Backend backend = Backend::Auto);

// One dot product per call (e.g. one attention score); writes one float.
class DotOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> a;
    std::span<const float> b;
  };

  explicit DotOp(BrickId id = BrickId::AttentionScore, std::string label = "dot")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input&) const noexcept { return 1; }
  // 1 token, 2n FLOPs, 8n bytes read + 4 written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  // Float accumulation in 64 lanes against double accumulation: for n = 4096 unit-normal inputs the
  // observed gap is ~1e-5 absolute on results of magnitude ~64; abs 1e-4 + rel 1e-4 keeps a margin
  // for activations of order one while any indexing or tail bug (errors of order one) still fails.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 1e-4, 1e-4}; }
};

}  // namespace brick::ops
