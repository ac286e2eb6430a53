#pragma once
// Fused projections of one token or a batch, as bricks (brick::BrickOp), over weights of any
// computable type, mixed as model files mix them: the activation is converted once into each format
// the matrices need (matvec.hpp) and every output row is computed in a single parallel pass over the
// pool, instead of one conversion, one fork and one join per projection. A batch holds `tokens`
// rows of inputs and gives as many rows of outputs; it runs as one GEMM pass (each cache tile of
// weight rows read once for all the tokens), with each token's bits those of a one-token call.
//
//   FusedQKVOp:    [Q | K | V] = [Wq; Wk; Wv] x     (grouped-query attention: K, V have n_kv_heads)
//   FusedGateUpOp: out[i] = silu(gate_i . x) * (up_i . x)   (each thread computes both rows of its
//                  range and writes only the product)
//
// Both hold views of their weights and a reference to the pool; the caller keeps them alive.
// Wrapped in a ComputeBrick with an Equivalence assertion against Backend::Scalar, each call can be
// checked against the scalar reference kernels.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/projection_op.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::quant {

class FusedQKVOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const float> x;  // the hidden states, `tokens` rows of cols(wq) values
    std::size_t tokens = 1;
  };

  // Throws InvalidArgument unless wq has n_heads * head_dim rows, wk and wv n_kv_heads * head_dim,
  // all three the same number of columns, and n_kv_heads divides n_heads.
  FusedQKVOp(WeightMatrix wq, WeightMatrix wk, WeightMatrix wv, std::size_t n_heads,
             std::size_t n_kv_heads, std::size_t head_dim, ThreadPool& pool, std::string label = "fused_qkv");

  std::size_t hidden() const noexcept { return cols(wq_); }
  std::size_t q_size() const noexcept { return n_heads_ * head_dim_; }
  std::size_t kv_size() const noexcept { return n_kv_heads_ * head_dim_; }
  // Per token: Q, then K, then V.
  std::size_t output_size(const Input& input) const noexcept { return input.tokens * (q_size() + 2 * kv_size()); }
  OpCost cost(const Input& input) const noexcept;
  // Throws InvalidArgument when x or out has the wrong size.
  void run(const Input& input, std::span<float> out, Backend backend) const;
  static Equivalence equivalence() noexcept { return projection_equivalence(); }

 private:
  void run_token(std::span<const float> x, std::span<float> out, Backend backend) const;

  WeightMatrix wq_, wk_, wv_;
  std::size_t n_heads_, n_kv_heads_, head_dim_;
  ThreadPool* pool_;
};

class FusedGateUpOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const float> x;  // `tokens` rows of cols(gate) values
    std::size_t tokens = 1;
  };

  // Throws InvalidArgument unless gate and up have the same shape.
  FusedGateUpOp(WeightMatrix gate, WeightMatrix up, ThreadPool& pool, std::string label = "fused_gate_up");

  std::size_t hidden() const noexcept { return cols(gate_); }
  std::size_t output_size(const Input& input) const noexcept { return input.tokens * rows(gate_); }
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;
  static Equivalence equivalence() noexcept { return projection_equivalence(); }

 private:
  void run_token(std::span<const float> x, std::span<float> out, Backend backend) const;
  void run_batch(std::span<const float> x, std::size_t tokens, std::span<float> out, Backend backend) const;

  WeightMatrix gate_, up_;
  ThreadPool* pool_;
};

static_assert(BrickOp<FusedQKVOp>);
static_assert(BrickOp<FusedGateUpOp>);

}  // namespace brick::quant
