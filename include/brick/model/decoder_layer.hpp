#pragma once
// One llama-style decoder layer for one token, assembled from float bricks: every kernel execution
// is a ComputeBrick with its assertions, run in order by a BrickLayer.
//
//   x -> rms_norm -> QKV matvec -> rope(q, k) -> per head: scores = K q, softmax, V^T p
//     -> output matvec -> + x -> rms_norm -> gate, up matvecs -> swiglu -> down matvec -> +
//     residual
//
// The attention reads a fixed key/value history (`context` positions); appending the new token's
// key and value is the KV cache's job (runtime/kv_cache), not this layer's.
#include <cstddef>
#include <deque>
#include <functional>
#include <span>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/core/brick_layer.hpp"
#include "brick/core/budget.hpp"
#include "brick/core/compute_brick.hpp"
#include "brick/core/layer_observer.hpp"
#include "brick/ops/activation.hpp"
#include "brick/ops/elementwise.hpp"
#include "brick/ops/make_brick.hpp"
#include "brick/ops/matvec.hpp"
#include "brick/ops/rms_norm.hpp"
#include "brick/ops/rope.hpp"
#include "brick/ops/softmax.hpp"

namespace brick::model {

struct DecoderShape {
  std::size_t hidden = 2048;
  std::size_t n_heads = 16;
  std::size_t n_kv_heads = 4;  // grouped-query attention when below n_heads
  std::size_t ffn = 5632;
  std::size_t context = 512;  // key/value positions each query attends to

  std::size_t head_dim() const noexcept { return hidden / n_heads; }
  std::size_t kv_dim() const noexcept { return n_kv_heads * head_dim(); }
  std::size_t qkv_rows() const noexcept { return hidden + 2 * kv_dim(); }

  // Throws InvalidArgument unless every size is positive, hidden splits into n_heads heads of even
  // size, and n_heads is a multiple of n_kv_heads.
  void validate() const;
};

// Row-major f32 weights, viewed, not owned.
struct DecoderWeights {
  std::span<const float> attn_norm;  // hidden
  std::span<const float> wqkv;       // qkv_rows x hidden: Q rows, then K rows, then V rows
  std::span<const float> wo;         // hidden x hidden
  std::span<const float> ffn_norm;   // hidden
  std::span<const float> w_gate;     // ffn x hidden
  std::span<const float> w_up;       // ffn x hidden
  std::span<const float> w_down;     // hidden x ffn
  // Key history, n_kv_heads x context x head_dim, pre-multiplied by 1/sqrt(head_dim) so the score
  // matvec yields scaled scores.
  std::span<const float> k_cache;
  // Value history transposed per head, n_kv_heads x head_dim x context, so V^T p is a matvec.
  std::span<const float> v_cache;

  // Throws InvalidArgument naming the first tensor whose size does not match `shape`.
  void validate(const DecoderShape& shape) const;
  std::size_t bytes() const noexcept;
};

// Weights drawn from a seeded normal distribution, scaled by 1/sqrt(fan-in) so activations keep a
// healthy magnitude through the layer.
class SyntheticWeights {
 public:
  SyntheticWeights(const DecoderShape& shape, std::uint64_t seed);
  DecoderWeights view() const noexcept;

 private:
  std::vector<float> attn_norm_, wqkv_, wo_, ffn_norm_, w_gate_, w_up_, w_down_, k_cache_, v_cache_;
};

struct DecoderOptions {
  Backend backend = Backend::Auto;
  // Each brick's token budget is the time its bytes take at this bandwidth.
  ByteBudget bandwidth_budget = ByteBudget::from_gb_per_second(10.0);
  BrickPolicy policy = {};
  float rms_eps = 1e-6f;
  float rope_base = 10000.0f;
  ops::RopeLayout rope_layout = ops::RopeLayout::Normal;
};

class DecoderLayer {
 public:
  // Views `weights` (they must outlive the layer). Throws InvalidArgument for a bad shape or
  // weights, BackendUnavailable for a backend this CPU cannot run.
  DecoderLayer(const DecoderShape& shape, const DecoderWeights& weights,
               const DecoderOptions& options);
  DecoderLayer(const DecoderLayer&) = delete;
  DecoderLayer& operator=(const DecoderLayer&) = delete;

  const DecoderShape& shape() const noexcept { return shape_; }
  Backend backend() const noexcept { return backend_; }
  std::size_t brick_count() const noexcept { return layer_.size(); }

  // Runs the layer for token `x` (hidden floats, else InvalidArgument) at `position`.
  Result<LayerReport> step(std::span<const float> x, std::size_t position,
                           LayerObserver* observer = nullptr, std::size_t layer_index = 0);

  // The hidden state after the last step.
  std::span<const float> output() const noexcept { return out_; }

  // Every assertion of every brick (Equivalence included), on the inputs of the last step.
  std::vector<VerifyReport> verify();

 private:
  template <class Op>
  ComputeBrick<Op>& add_brick(std::deque<ComputeBrick<Op>>& bricks,
                              std::deque<typename Op::Input>& inputs, Op op,
                              typename Op::Input input, std::span<float> output);

  DecoderShape shape_;
  DecoderOptions options_;
  Backend backend_;

  std::vector<float> x_, xn_, qkv_, qk_rot_, scores_, probs_, attn_, o_, h_, hn_, gate_, up_, act_,
      down_, out_;

  std::deque<ComputeBrick<ops::RmsNormOp>> norms_;
  std::deque<ComputeBrick<ops::MatvecOp>> matvecs_;
  std::deque<ComputeBrick<ops::RopeOp>> ropes_;
  std::deque<ComputeBrick<ops::SoftmaxOp>> softmaxes_;
  std::deque<ComputeBrick<ops::SwigluOp>> swiglus_;
  std::deque<ComputeBrick<ops::AddOp>> adds_;
  std::deque<ops::RmsNormOp::Input> norm_inputs_;
  std::deque<ops::MatvecOp::Input> matvec_inputs_;
  std::deque<ops::RopeOp::Input> rope_inputs_;
  std::deque<ops::SoftmaxOp::Input> softmax_inputs_;
  std::deque<ops::SwigluOp::Input> swiglu_inputs_;
  std::deque<ops::AddOp::Input> add_inputs_;
  std::vector<std::function<VerifyReport()>> verifiers_;  // one per brick, in run order
  BrickLayer layer_;
};

}  // namespace brick::model
