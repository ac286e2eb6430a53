#pragma once
// Bricks over a weight matrix of any computable type (weight_matrix.hpp):
//
//   ProjectionOp: y = W x for one token or a batch (the output projection, the down projection, the
//                 LM head); a batch is one GEMM pass, each token with the bits matvec() gives it.
//   EmbeddingOp:  the rows of W named by token ids, as floats (the token embedding lookup).
//
// Both view their weights (and the projection its pool); the caller keeps them alive.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"
#include "brick/quant/weight_matrix.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::quant {

// Tolerance of a quantized or f32 mat-vec against the Scalar backend: integer block sums are
// exact, but the float sum over blocks runs in another order in every backend.
inline Equivalence projection_equivalence() noexcept { return {Backend::Scalar, 1e-4, 1e-4}; }

class ProjectionOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const float> x;  // `tokens` rows of cols(w) values
    std::size_t tokens = 1;
  };

  // Throws InvalidArgument when `w` does not validate (see validate()).
  ProjectionOp(BrickId id, std::string label, WeightMatrix w, ThreadPool& pool);

  const WeightMatrix& weights() const noexcept { return w_; }
  // `tokens` rows of rows(w) values.
  std::size_t output_size(const Input& input) const noexcept { return input.tokens * w_.rows(); }
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;
  static Equivalence equivalence() noexcept { return projection_equivalence(); }

 private:
  WeightMatrix w_;
  ThreadPool* pool_;
};

class EmbeddingOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const std::int32_t> tokens;  // rows of the table (else InvalidArgument)
  };

  explicit EmbeddingOp(WeightMatrix table, std::string label = "token_embd");

  std::size_t output_size(const Input& input) const noexcept { return input.tokens.size() * table_.cols(); }
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;
  // Dequantizing is the same scalar arithmetic on every backend.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 0.0, 0.0}; }

 private:
  WeightMatrix table_;
};

static_assert(BrickOp<ProjectionOp>);
static_assert(BrickOp<EmbeddingOp>);

}  // namespace brick::quant
