#pragma once
// The attention of one token against a KvCache, as llama.cpp's CPU backend computes it without
// flash attention, in two bricks:
//
//   KvWriteOp:    the tokens' (rotated) key and value rows into their cache cells, rounded to
//                 F16 in an F16 cache; the output is the stored rows read back as floats.
//   AttentionOp:  for every token and query head h (GQA: kv head h / (n_head / n_kv_head)), the
//                 scores s_c = (k_c . q_h) / sqrt(head_dim) over the token's causal window of cells
//                 (a sequence stored from cell 0), p = softmax(s), out_h = sum_c p_c v_c.
//                 With an F16 cache q_h and p are rounded to F16 first, as ggml converts the F32
//                 operand of an F16 mat-mul; with an F32 cache nothing is rounded.
//
// Both take one token or a batch of consecutive ones, whose rows may be spaced wider than they are
// long: K, V and Q are read straight out of the rows the projections and RoPE wrote. Both reference
// their cache; the caller keeps it alive and sets the cells per call.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/op.hpp"
#include "brick/ops/op_identity.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick::model {

class KvWriteOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const float> k;  // `tokens` rows of row_elements() values, k_stride apart
    std::span<const float> v;  // the same, v_stride apart
    std::size_t layer = 0;
    CellIndex cell = 0;  // token t goes to cell + t
    std::size_t tokens = 1;
    std::size_t k_stride = 0;  // 0: row_elements(), the rows back to back
    std::size_t v_stride = 0;
  };

  explicit KvWriteOp(KvCache& cache, std::string label = "kv_write");

  // Per token, its K row then its V row.
  std::size_t output_size(const Input& input) const noexcept {
    return 2 * input.tokens * cache_->shape().row_elements();
  }
  OpCost cost(const Input& input) const noexcept;
  // Throws InvalidArgument for rows too short or cells outside the cache, StateError for a cell no
  // sequence holds (claim them with KvCache::find_slot first).
  void run(const Input& input, std::span<float> out, Backend backend) const;
  // F16 rounding is exact arithmetic, the same bits on every backend.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 0.0, 0.0}; }

 private:
  KvCache* cache_;
  mutable std::vector<std::uint16_t> k16_, v16_;
};

struct AttentionShape {
  std::size_t n_head = 0;
  std::size_t n_kv_head = 0;  // divides n_head
  std::size_t head_dim = 0;
};

class AttentionOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const float> q;  // `tokens` rows, each starting with n_head * head_dim values;
                               // row t starts at t * (q.size() / tokens)
    std::size_t layer = 0;
    // The last token attends to cells [0, cells); token t of the batch to [0, cells - tokens + 1 +
    // t).
    std::size_t cells = 0;
    std::size_t tokens = 1;
  };

  // Throws InvalidArgument when the shape does not match the cache's kv heads and head size.
  AttentionOp(const KvCache& cache, AttentionShape shape, ThreadPool& pool,
              std::string label = "attention");

  std::size_t output_size(const Input& input) const noexcept {
    return input.tokens * shape_.n_head * shape_.head_dim;
  }
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;
  // Dot products, the softmax's sums and the weighted sum run in another order per backend.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 1e-5, 1e-4}; }
  // With an F16 cache the softmax weights are rounded to F16 after a softmax whose last bits differ
  // between backends; a weight that rounds the other way moves an output by up to 2^-11 of a V
  // value (the weights sum to 1). 2^-8 absolute covers V values up to 8 (trained models stay well
  // below), 2^-9 relative the rest.
  static Equivalence equivalence(KvType cache) noexcept {
    return cache == KvType::F16 ? Equivalence{Backend::Scalar, 0x1p-8, 0x1p-9} : equivalence();
  }

  // The softmax weights query head `head` of the last token of `input` gave its cells [0,
  // input.cells) in a run() on `backend`, bit for bit (rounded to F16 with an F16 cache): what a
  // tracer reads after the run. They are computed again from the cache, on the calling thread, so
  // the cache must still hold what the run read. InvalidArgument for an input run() refuses, a head
  // outside the shape or `weights` not input.cells long.
  void softmax_weights(const Input& input, std::size_t head, std::span<float> weights,
                       Backend backend) const;

 private:
  void require_valid(const Input& input, std::size_t outputs) const;
  // p = softmax(K q / sqrt(d)) of one query head: K is n cells of d values (as convert_kv_head
  // lays them out), q is rounded in place and p too with an F16 cache; `half` holds at least
  // max(n, d) values.
  void head_weights(std::span<const float> k, std::span<float> q, std::span<float> scores,
                    std::span<float> probs, std::span<std::uint16_t> half, Backend backend) const;
  // Per pool thread: one kv head's keys and values as floats, a cell's d values together (the
  // scores of a query head are a mat-vec over the keys, the outputs of a token's heads one
  // transposed mat-vec over the values, ops::matvec_transposed_batch); one head's scores, the
  // probabilities of each head of the kv head's group, and a rounded query.
  struct Scratch {
    std::vector<float> k, v;  // grown to the longest context seen
    std::vector<float> scores, probs, q;  // probs: a group of heads' rows of n_cells
    std::vector<std::uint16_t> half;      // F16 rounding of q or p
  };
  // The keys (or values) of kv head `kv_head` in cells [0, n) of `layer` into `out` as floats, n
  // rows of head_dim: straight from the cache's strided rows, no copy of the other heads.
  void convert_kv_head(std::size_t layer, std::size_t kv_head, std::size_t n, bool key, std::span<float> out,
                       Backend backend) const;
  // Query heads [first_head, end_head) of one token, all of one kv head, against that kv head
  // converted into `s`: the token's window is cells [0, n); q and out are the token's rows.
  void run_heads(std::span<const float> q, std::size_t n, std::span<float> out, std::size_t first_head,
                 std::size_t end_head, Backend backend, Scratch& s) const;

  const KvCache* cache_;
  AttentionShape shape_;
  ThreadPool* pool_;
  mutable std::vector<Scratch> scratch_;
};

static_assert(BrickOp<KvWriteOp>);
static_assert(BrickOp<AttentionOp>);

}  // namespace brick::model
