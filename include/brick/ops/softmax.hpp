#pragma once
// Numerically stable softmax over one row, with -inf entries as attention masks.
#include <cstddef>
#include <span>
#include <string>
#include <utility>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::ops {

// out[i] = exp(x[i] - max) / sum_j exp(x[j] - max), with the sum in double on every backend.
// Masked entries (-inf) come out as exactly 0. A row that is entirely -inf (nothing to attend to)
// comes out as all zeros, not NaN. A NaN anywhere, or a +inf, makes the whole row NaN. The SIMD
// backends use a vectorised exp whose error is at most 2 ulp over the float range (see
// src/ops/kernels/simd_avx512.hpp; tests/ops/exp_f32_test.cpp measures it). out may be x itself but
// must not partially overlap it. Throws InvalidArgument when x is empty, the sizes differ, or the
// spans partially overlap.
void softmax(std::span<const float> x, std::span<float> out, Backend backend = Backend::Auto);

// One row of attention scores (one query, one head).
class SoftmaxOp : public OpIdentity {
 public:
  struct Input {
    std::span<const float> x;
  };

  explicit SoftmaxOp(BrickId id = BrickId::AttentionSoftmax, std::string label = "softmax")
      : OpIdentity(id, std::move(label)) {}

  std::size_t output_size(const Input& input) const noexcept { return input.x.size(); }
  // 1 token, 5n FLOPs (max, subtract, exp counted as one, sum, scale), 4n read + 4n written.
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;

  // exp within 2 ulp, the double sum and the final scale within 1 ulp each: outputs agree within
  // ~4 ulp (rel 5e-7); rel 2e-6 leaves margin, abs 1e-30 forgives probabilities in the denormal
  // range.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 1e-30, 2e-6}; }
};

}  // namespace brick::ops
