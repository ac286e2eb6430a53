#pragma once
// A llama decoder assembled from bricks: every kernel execution is a ComputeBrick with its
// assertions, each transformer block a BrickLayer run in order, all parallel work on one
// ThreadPool.
//
//   tokens -> Embedding -> per block: RmsNorm -> FusedQKV -> RoPE (q, k) -> KvWrite -> Attention
//          -> OutputProjection -> Residual -> RmsNorm -> FusedGateUp (SwiGLU) -> DownProjection
//          -> Residual;  then, for the last token, RmsNorm -> LmHead -> logits
//
// Numerics follow llama.cpp's CPU backend: activations go to the weight type's activation format
// (Q8_K for the k-quants) inside the projections, the KV cache is F16 by default, and attention
// rounds q and the softmax weights to F16 (see attention.hpp).
//
// A prompt runs in batches of up to n_batch tokens: every brick takes the whole batch at once, so
// each weight matrix is streamed once per batch, not once per token. Batches share one set of
// activation buffers; a single token (decoding) runs on buffers each block owns, so verify()
// re-runs every brick on exactly the inputs of its last call.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/core/brick_layer.hpp"
#include "brick/core/budget.hpp"
#include "brick/core/compute_brick.hpp"
#include "brick/core/layer_observer.hpp"
#include "brick/model/llama_config.hpp"
#include "brick/model/llama_weights.hpp"
#include "brick/model/vocab.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "brick/trace/model_tracer.hpp"

namespace brick::model {

struct LlamaOptions {
  Backend backend = Backend::Auto;
  BrickPolicy policy = {};
  KvType kv_type = KvType::F16;
  std::size_t n_ctx = 512;    // positions the KV cache holds (at most the model's context length)
  std::size_t n_batch = 512;  // prompt tokens run through the bricks at once (llama.cpp's n_ubatch)
  // Each brick's token budget is the time its bytes take at this bandwidth.
  ByteBudget bandwidth_budget = ByteBudget::from_gb_per_second(10.0);
  // Matrices the bricks multiply with in the layout the backend's kernels run fastest on
  // (quant::preferred_layout): with AVX2, the Q4_K, Q5_K and Q6_K ones are copied at construction,
  // on the pool, into the sub-block interleaved layout (Q4_K and Q5_K 2.3-2.8% more bytes than the
  // file's blocks); with AVX2 or AVX-512 VNNI, the Q8_0 ones whose rows are whole groups of 512
  // values into grouped blocks (the same bytes); the same values and results. False keeps every matrix a view of the caller's
  // weights.
  bool repack = true;
  // Called on the constructing thread with each of the caller's matrices as soon as repack has
  // copied it, before the next is copied. Where the weights are a file mapping,
  // LlamaModel::release() there drops the matrix's pages, so that no more than one matrix is
  // resident twice while the decoder is built.
  std::function<void(const quant::WeightMatrix&)> on_repacked;
};

class LlamaDecoder {
 public:
  // Views the weights (they must outlive the decoder), or copies of those that options.repack
  // repacks. Throws FormatError for a config or weights
  // that do not fit together, InvalidArgument for n_ctx or n_batch 0 or n_ctx above the model's
  // context length, BackendUnavailable for a backend this CPU cannot run, CapacityError when the
  // KV cache cannot be allocated.
  LlamaDecoder(const LlamaConfig& config, const LlamaWeights& weights, ThreadPool& pool,
               const LlamaOptions& options = {});
  ~LlamaDecoder();
  LlamaDecoder(const LlamaDecoder&) = delete;
  LlamaDecoder& operator=(const LlamaDecoder&) = delete;

  const LlamaConfig& config() const noexcept { return config_; }
  Backend backend() const noexcept { return backend_; }
  // The weights the bricks run on: the caller's, with the repacked matrices in place of theirs.
  const LlamaWeights& weights() const noexcept { return *weights_; }
  // Matrices repacked at construction, and their bytes.
  std::size_t repacked_matrices() const noexcept { return repacked_.size(); }
  double repacked_bytes() const noexcept;
  std::size_t n_past() const noexcept { return n_past_; }
  std::size_t n_ctx() const noexcept { return options_.n_ctx; }
  // Bricks per token: the embedding, every block's and the head's.
  std::size_t brick_count() const noexcept;

  // Runs `token` at position n_past() and returns the logits (n_vocab values, valid until the
  // next step). The observer sees block i as layer i, the head as layer n_layer and the embedding
  // as layer n_layer + 1, after on_tokens() with the positions of the step (of each batch, in
  // evaluate()). Throws InvalidArgument for a token outside the vocabulary and
  // CapacityError when the context is full; an assertion that fails under OnFailure::Error comes
  // back as the error.
  Result<std::span<const float>> step(TokenId token, LayerObserver* observer = nullptr);

  // Runs `tokens` at positions n_past(), n_past() + 1, ... in batches of up to n_batch and returns
  // the logits of the last one. Throws as step() does, before anything runs: for any id outside
  // the vocabulary, or when the context cannot hold them all.
  Result<std::span<const float>> evaluate(std::span<const TokenId> tokens,
                                          LayerObserver* observer = nullptr);

  // Forgets every position (the KV cache is cleared).
  void reset();

  // Model tracing. With a tracer, every evaluate() and step() records into it, in a forward of its
  // own at its first position unless the caller already opened one (Generator does, so as to record
  // the logits with the token it samples):
  //   tensors       "token_embd" (the embedding's rows), "output_norm" and "logits" (the head's)
  //   activations   of every block, over every token of the batch: Input (the block's input),
  //                 AfterNorm (the attention norm's output), AfterAttention (the residual stream
  //                 after attention, the block's input as residual), AfterFfn (the down
  //                 projection's output) and Output (the stream after attention as residual)
  //   attention     every block's and query head's softmax weights for the last token
  //   quant_error   on due forwards, for the last token, the output of each quantized projection
  //                 of one layer (ModelTracer::quant_error_layer: the blocks in turn, then the head
  //                 as layer n_layer) against dequantized_matvec of its weights with the same
  //                 input (quant/dequantized_matvec.hpp): blk.i.qkv, blk.i.attn_output,
  //                 blk.i.gate_up (silu(gate) * up) and blk.i.ffn_down, or output
  //   layer_logits  on due forwards a caller opened: the logit lens, layer_logits()
  //   kv_cache      after every evaluate(), its step the positions held
  // Tracing reads what the bricks wrote and changes nothing: the logits are the same bits with or
  // without a tracer. The tracer must outlive its use; null stops tracing.
  void set_tracer(trace::ModelTracer* tracer) noexcept { tracer_ = tracer; }
  trace::ModelTracer* tracer() const noexcept { return tracer_; }
  // The logit lens of the last evaluate(), when it was due: n_layer rows of n_vocab logits, row i
  // the final norm and LM head applied to block i's output for the last token (all rows in one
  // batched pass over the LM head, each with the bits the head's mat-vec gives it: the last row
  // equals the logits). Empty when the last evaluate() computed none. The
  // caller records them (ModelTracer::record_layer_logits) once it knows the chosen token.
  std::span<const float> layer_logits() const noexcept;

  // Every assertion of every brick (Equivalence included), on the inputs of the last token
  // evaluated. After a batch, that token is first run again on its own (it rewrites its own KV
  // cell with what it held), so that every brick has the inputs of one call to check.
  std::vector<VerifyReport> verify();

  // Time spent in each layer since the decoder was built: the embedding, the blocks in order, then
  // the head (each the sum over its runs of the BrickLayer's time; a batch is one run).
  struct LayerTime {
    std::string_view layer;
    std::uint64_t ns = 0;
    std::uint64_t runs = 0;
  };
  std::span<const LayerTime> layer_times() const noexcept { return layer_times_; }

 private:
  struct Buffers;
  struct Embedding;
  struct Block;
  struct Head;
  struct Tracing;

  void require_room(std::span<const TokenId> tokens) const;
  // The layers quantization error takes in turn: the blocks and the head.
  std::uint32_t layers_measured() const noexcept {
    return static_cast<std::uint32_t>(config_.n_layer + 1);
  }
  // Runs `tokens` at position n_past_ from KV cell `cell`, on the `shared` batch buffers or, when
  // null, on each block's own one-token buffers.
  // `tracer` (null: none) records the run; `last`: the batch holds the last token of the
  // evaluate() (what is traced of that token alone); `lens`: compute the logit lens.
  Result<std::span<const float>> run(std::span<const TokenId> tokens, CellIndex cell,
                                     Buffers* shared, LayerObserver* observer,
                                     trace::ModelTracer* tracer, bool last, bool lens);
  // What `tracer` records of block i, which just ran on the rows of `x` (its input, intact).
  void trace_block(trace::ModelTracer& tracer, std::size_t i, std::span<const float> x,
                   std::size_t tokens, bool last, bool lens);
  Buffers& batch_buffers(std::size_t tokens);

  // The weights with the matrices options_.repack repacks replaced by copies in repacked_.
  const LlamaWeights& repacked(const LlamaWeights& weights);

  LlamaConfig config_;
  std::vector<quant::RepackedMatrix> repacked_;
  LlamaWeights own_weights_;  // the caller's weights with repacked matrices, when there are any
  const LlamaWeights* weights_;
  ThreadPool* pool_;
  LlamaOptions options_;
  Backend backend_;
  KvCache cache_;
  std::size_t n_past_ = 0;
  std::unique_ptr<Buffers> batch_;  // grown on first use, up to n_batch tokens
  std::unique_ptr<Embedding> embedding_;
  std::deque<Block> blocks_;
  std::unique_ptr<Head> head_;
  std::vector<LayerTime> layer_times_;
  trace::ModelTracer* tracer_ = nullptr;
  std::unique_ptr<Tracing> tracing_;
  // The last token evaluated, its cell, and whether it ran in a batch (verify() then replays it).
  TokenId last_token_ = 0;
  CellIndex last_cell_ = 0;
  bool last_was_batch_ = false;
};

}  // namespace brick::model
