#include "brick/model/llama_decoder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "brick/core/error.hpp"
#include "brick/model/attention.hpp"
#include "brick/ops/activation.hpp"
#include "brick/ops/elementwise.hpp"
#include "brick/ops/rms_norm.hpp"
#include "brick/ops/rope.hpp"
#include "brick/quant/dequantized_matvec.hpp"
#include "brick/quant/fused_ops.hpp"
#include "brick/quant/projection_op.hpp"
#include "brick/trace/forward_scope.hpp"

namespace brick::model {
namespace {

// A brick checked against the scalar reference within `equivalence` and for finite outputs, with a
// budget of its bytes (for one token) at the options' bandwidth.
template <class Op>
ComputeBrick<Op> make(Op op, const typename Op::Input& input, const LlamaOptions& options,
                      Backend backend, Equivalence equivalence = Op::equivalence()) {
  const double bytes = op.cost(input).bytes;
  const auto budget = TokenBudget::from_us_per_token(
      std::max(bytes, 1.0) / (options.bandwidth_budget.gb_per_second() * 1e3));
  return ComputeBrick<Op>(std::move(op), {equivalence, Finite{}}, backend, budget,
                          options.policy);
}

std::string block_name(std::size_t index, const char* what) {
  return fmt::format("blk.{}.{}", index, what);
}

KvCacheShape cache_shape(const LlamaConfig& config, const LlamaOptions& options) {
  if (options.n_ctx == 0 || options.n_ctx > config.n_ctx_train) {
    throw InvalidArgument(
        fmt::format("llama decoder: a context of {} positions; the model allows 1..{}",
                    options.n_ctx, config.n_ctx_train));
  }
  if (options.n_batch == 0)
    throw InvalidArgument("llama decoder: a batch of 0 tokens; it must be at least 1");
  return {config.n_layer, options.n_ctx, config.n_head_kv, config.head_dim(), options.kv_type};
}

const LlamaConfig& validated(const LlamaConfig& config, const LlamaWeights& weights) {
  config.validate();
  weights.validate(config);
  return config;
}

// Runs one BrickLayer and adds its time to `time`.
Result<LayerReport> run_layer(BrickLayer& layer, LayerObserver* observer, std::size_t index,
                              LlamaDecoder::LayerTime& time) {
  auto report = layer.run(observer, index);
  if (report) {
    time.ns += report->total_ns;
    ++time.runs;
  }
  return report;
}

}  // namespace

// The activations of a block for up to `capacity` tokens, token-major (row t of each buffer is
// token t's).
struct LlamaDecoder::Buffers {
  std::size_t capacity;
  std::vector<float> xn, qkv, qk_rot, kv, attn, o, h, hn, act, down, out;

  Buffers(const LlamaConfig& c, std::size_t tokens)
      : capacity(tokens),
        xn(tokens * c.n_embd),
        qkv(tokens * (c.n_embd + 2 * c.kv_dim())),
        qk_rot(tokens * (c.n_embd + c.kv_dim())),
        kv(tokens * 2 * c.kv_dim()),
        attn(tokens * c.n_embd),
        o(tokens * c.n_embd),
        h(tokens * c.n_embd),
        hn(tokens * c.n_embd),
        act(tokens * c.n_ff),
        down(tokens * c.n_embd),
        out(tokens * c.n_embd) {}

  static std::span<float> rows(std::vector<float>& buffer, std::size_t tokens, std::size_t width) {
    return std::span(buffer).first(tokens * width);
  }
};

struct LlamaDecoder::Embedding {
  std::vector<float> own;          // one token
  std::vector<TokenId> tokens{0};  // the ids of the last run
  quant::EmbeddingOp::Input input{tokens};
  std::span<float> output;
  ComputeBrick<quant::EmbeddingOp> brick;
  BrickLayer layer{"embedding"};

  Embedding(const LlamaWeights& w, const LlamaOptions& options, Backend backend)
      : own(w.token_embd.cols()),
        output(own),
        brick(make(quant::EmbeddingOp(w.token_embd), input, options, backend)) {
    layer.add(brick, input, &output);
  }
};

struct LlamaDecoder::Block {
  struct Inputs {
    ops::RmsNormOp::Input attn_norm;
    quant::FusedQKVOp::Input qkv;
    ops::RopeOp::Input rope;
    KvWriteOp::Input kv;
    AttentionOp::Input attention;
    quant::ProjectionOp::Input wo;
    ops::AddOp::Input attn_residual;
    ops::RmsNormOp::Input ffn_norm;
    quant::FusedGateUpOp::Input gate_up;
    quant::ProjectionOp::Input down;
    ops::AddOp::Input ffn_residual;
  };
  struct Outputs {
    std::span<float> xn, qkv, qk_rot, kv, attn, o, h, hn, act, down, out;
  };

  std::size_t index;
  const LlamaConfig& c;
  const LlamaLayerWeights& w;
  Buffers own;  // one token
  Outputs outputs;
  Inputs in;
  std::deque<std::function<VerifyReport()>> verifiers;
  BrickLayer layer;

  ComputeBrick<ops::RmsNormOp> attn_norm;
  ComputeBrick<quant::FusedQKVOp> qkv_proj;
  ComputeBrick<ops::RopeOp> rope;
  ComputeBrick<KvWriteOp> kv_write;
  ComputeBrick<AttentionOp> attention;
  ComputeBrick<quant::ProjectionOp> wo;
  ComputeBrick<ops::AddOp> attn_residual;
  ComputeBrick<ops::RmsNormOp> ffn_norm;
  ComputeBrick<quant::FusedGateUpOp> gate_up;
  ComputeBrick<quant::ProjectionOp> ffn_down;
  ComputeBrick<ops::AddOp> ffn_residual;

  Block(std::size_t i, const LlamaConfig& config, const LlamaLayerWeights& weights,
        std::span<const float> x, KvCache& cache, ThreadPool& pool, const LlamaOptions& options,
        Backend backend)
      : index(i),
        c(config),
        w(weights),
        own(config, 1),
        layer(fmt::format("blk.{}", i)),
        attn_norm(make(ops::RmsNormOp(BrickId::RmsNorm, block_name(i, "attn_norm")),
                       bind(own, x, 1, 0, 0).attn_norm, options, backend)),
        qkv_proj(
            make(quant::FusedQKVOp(w.wq, w.wk, w.wv, c.n_head, c.n_head_kv, c.head_dim(), pool,
                                      block_name(i, "qkv")),
                 in.qkv, options, backend)),
        rope(make(ops::RopeOp(BrickId::RopeEmbedding, block_name(i, "rope")), in.rope, options,
                  backend)),
        kv_write(make(KvWriteOp(cache, block_name(i, "kv_write")), in.kv, options, backend)),
        attention(make(AttentionOp(cache, {c.n_head, c.n_head_kv, c.head_dim()}, pool,
                                   block_name(i, "attention")),
                       in.attention, options, backend, AttentionOp::equivalence(options.kv_type))),
        wo(make(quant::ProjectionOp(BrickId::OutputProjection, block_name(i, "attn_output"), w.wo,
                                    pool),
                in.wo, options, backend)),
        attn_residual(make(ops::AddOp(BrickId::Residual, block_name(i, "attn_residual")),
                           in.attn_residual, options, backend)),
        ffn_norm(make(ops::RmsNormOp(BrickId::RmsNorm, block_name(i, "ffn_norm")), in.ffn_norm,
                      options, backend)),
        gate_up(make(quant::FusedGateUpOp(w.gate, w.up, pool, block_name(i, "gate_up")), in.gate_up, options,
                     backend)),
        ffn_down(make(
            quant::ProjectionOp(BrickId::DownProjection, block_name(i, "ffn_down"), w.down, pool),
            in.down, options, backend)),
        ffn_residual(make(ops::AddOp(BrickId::Residual, block_name(i, "ffn_residual")),
                          in.ffn_residual, options, backend)) {
    add(attn_norm, in.attn_norm, outputs.xn);
    add(qkv_proj, in.qkv, outputs.qkv);
    add(rope, in.rope, outputs.qk_rot);
    add(kv_write, in.kv, outputs.kv);
    add(attention, in.attention, outputs.attn);
    add(wo, in.wo, outputs.o);
    add(attn_residual, in.attn_residual, outputs.h);
    add(ffn_norm, in.ffn_norm, outputs.hn);
    add(gate_up, in.gate_up, outputs.act);
    add(ffn_down, in.down, outputs.down);
    add(ffn_residual, in.ffn_residual, outputs.out);
  }

  template <class Op>
  void add(ComputeBrick<Op>& brick, const typename Op::Input& input,
           const std::span<float>& output) {
    layer.add(brick, input, &output);
    verifiers.emplace_back([&brick, &input] { return brick.verify(input); });
  }

  // Points every brick at `buffers` for `tokens` tokens whose hidden states are the rows of `x`, at
  // `position` from KV cell `cell`. In shared buffers x may be `out` itself: the last brick to read
  // x (the attention residual) runs before the one that writes out.
  const Inputs& bind(Buffers& b, std::span<const float> x, std::size_t tokens, std::size_t position,
                     CellIndex cell) {
    const std::size_t e = c.n_embd, kv = c.kv_dim(), q = c.n_embd;
    outputs = {Buffers::rows(b.xn, tokens, e),          Buffers::rows(b.qkv, tokens, q + 2 * kv),
               Buffers::rows(b.qk_rot, tokens, q + kv), Buffers::rows(b.kv, tokens, 2 * kv),
               Buffers::rows(b.attn, tokens, e),        Buffers::rows(b.o, tokens, e),
               Buffers::rows(b.h, tokens, e),           Buffers::rows(b.hn, tokens, e),
               Buffers::rows(b.act, tokens, c.n_ff),    Buffers::rows(b.down, tokens, e),
               Buffers::rows(b.out, tokens, e)};
    const Outputs& o = outputs;
    in.attn_norm = {x, w.attn_norm, c.rms_eps};
    in.qkv = {o.xn, tokens};
    in.rope = {
        o.qkv, {c.head_dim(), position, c.rope_freq_base, ops::RopeLayout::Normal}, tokens, q + kv};
    in.kv = {o.qk_rot.subspan(q), o.qkv.subspan(q + kv), index, cell, tokens, q + kv, q + 2 * kv};
    in.attention = {o.qk_rot, index, static_cast<std::size_t>(cell) + tokens, tokens};
    in.wo = {o.attn, tokens};
    in.attn_residual = {x, o.o, tokens};
    in.ffn_norm = {o.h, w.ffn_norm, c.rms_eps};
    in.gate_up = {o.hn, tokens};
    in.down = {o.act, tokens};
    in.ffn_residual = {o.h, o.down, tokens};
    return in;
  }
};

struct LlamaDecoder::Head {
  std::vector<float> xn, logits;
  ops::RmsNormOp::Input norm_in;
  quant::ProjectionOp::Input lm_head_in;
  std::span<float> norm_out, logits_out;
  ComputeBrick<ops::RmsNormOp> norm;
  ComputeBrick<quant::ProjectionOp> lm_head;
  BrickLayer layer{"head"};

  Head(const LlamaConfig& c, const LlamaWeights& w, std::span<const float> x, ThreadPool& pool,
       const LlamaOptions& options, Backend backend)
      : xn(c.n_embd),
        logits(c.n_vocab),
        norm_in{x, w.output_norm, c.rms_eps},
        lm_head_in{xn},
        norm_out(xn),
        logits_out(logits),
        norm(make(ops::RmsNormOp(BrickId::RmsNorm, "output_norm"), norm_in, options, backend)),
        lm_head(make(quant::ProjectionOp(BrickId::LmHead, "output", w.output, pool), lm_head_in,
                     options, backend)) {
    layer.add(norm, norm_in, &norm_out);
    layer.add(lm_head, lm_head_in, &logits_out);
  }
};

// What tracing works in, grown on first use: the copies and reference outputs it compares, and the
// logit lens.
struct LlamaDecoder::Tracing {
  // The LM head over every block's normed output at once: one pass over its weights, each row with
  // the bits a mat-vec gives it.
  quant::ProjectionOp lens_head;
  explicit Tracing(quant::ProjectionOp head) : lens_head(std::move(head)) {}

  std::vector<float> input;      // a block's input rows (in shared buffers the block overwrites them)
  std::vector<float> weights;    // one head's softmax weights
  std::vector<float> reference;  // a projection's f32 reference output
  std::vector<float> gate, up;   // the reference's gate and up rows
  std::vector<float> lens_x;     // n_layer rows: the final norm of each block's output
  std::vector<float> lens;       // n_layer rows of n_vocab
  bool lens_valid = false;
};

LlamaDecoder::LlamaDecoder(const LlamaConfig& config, const LlamaWeights& weights, ThreadPool& pool,
                           const LlamaOptions& options)
    : config_(validated(config, weights)),
      weights_(&weights),
      pool_(&pool),
      options_(options),
      backend_(resolve(options.backend)),
      cache_(cache_shape(config_, options)) {
  weights_ = &repacked(weights);
  embedding_ = std::make_unique<Embedding>(*weights_, options_, backend_);
  std::span<const float> x = embedding_->own;
  for (std::size_t i = 0; i < config_.n_layer; ++i) {
    Block& block =
        blocks_.emplace_back(i, config_, weights_->layers[i], x, cache_, pool, options_, backend_);
    x = block.own.out;
  }
  head_ = std::make_unique<Head>(config_, *weights_, x, pool, options_, backend_);
  layer_times_.push_back({embedding_->layer.name()});
  for (const Block& block : blocks_) layer_times_.push_back({block.layer.name()});
  layer_times_.push_back({head_->layer.name()});
  tracing_ = std::make_unique<Tracing>(
      quant::ProjectionOp(BrickId::LmHead, "logit_lens", weights_->output, pool));
}

const LlamaWeights& LlamaDecoder::repacked(const LlamaWeights& weights) {
  if (!options_.repack) return weights;
  own_weights_ = weights;
  repacked_.reserve(7 * config_.n_layer + 1);
  const auto in_preferred_layout = [&](quant::WeightMatrix& w) {
    const quant::WeightLayout layout = quant::preferred_layout(w.type(), backend_);
    if (layout != w.layout() && quant::row_bytes(w.type(), layout, w.cols())) {
      const quant::WeightMatrix source = w;
      w = repacked_.emplace_back(source, layout, pool_).matrix();
      if (options_.on_repacked) options_.on_repacked(source);
    }
  };
  for (LlamaLayerWeights& layer : own_weights_.layers) {
    for (quant::WeightMatrix* w : {&layer.wq, &layer.wk, &layer.wv, &layer.wo, &layer.gate, &layer.up, &layer.down}) {
      in_preferred_layout(*w);
    }
  }
  // A tied output is the embedding table too: one copy serves both (a row dequantizes to the same
  // floats in either layout).
  in_preferred_layout(own_weights_.output);
  if (own_weights_.tied_output) own_weights_.token_embd = own_weights_.output;
  return repacked_.empty() ? weights : own_weights_;
}

double LlamaDecoder::repacked_bytes() const noexcept {
  double total = 0.0;
  for (const quant::RepackedMatrix& m : repacked_) total += quant::bytes(m.matrix());
  return total;
}

LlamaDecoder::~LlamaDecoder() = default;

std::size_t LlamaDecoder::brick_count() const noexcept {
  return embedding_->layer.size() + blocks_.size() * blocks_.front().layer.size() +
         head_->layer.size();
}

void LlamaDecoder::require_room(std::span<const TokenId> tokens) const {
  for (const TokenId token : tokens) {
    if (token < 0 || static_cast<std::size_t>(token) >= config_.n_vocab) {
      throw InvalidArgument(fmt::format(
          "llama decoder: token id {} is outside the vocabulary of {}", token, config_.n_vocab));
    }
  }
  if (tokens.size() > options_.n_ctx - n_past_) {
    throw CapacityError(fmt::format(
        "llama decoder: {} more tokens do not fit the context of {} positions ({} used)",
        tokens.size(), options_.n_ctx, n_past_));
  }
}

LlamaDecoder::Buffers& LlamaDecoder::batch_buffers(std::size_t tokens) {
  if (!batch_ || batch_->capacity < tokens) batch_ = std::make_unique<Buffers>(config_, tokens);
  return *batch_;
}

Result<std::span<const float>> LlamaDecoder::run(std::span<const TokenId> tokens, CellIndex cell,
                                                 Buffers* shared, LayerObserver* observer,
                                                 trace::ModelTracer* tracer, bool last, bool lens) {
  const std::size_t n = tokens.size();
  const std::size_t e = config_.n_embd;
  if (observer) observer->on_tokens(n_past_, n);
  embedding_->tokens.assign(tokens.begin(), tokens.end());
  embedding_->input.tokens = embedding_->tokens;
  embedding_->output =
      shared ? Buffers::rows(shared->out, n, e) : std::span<float>(embedding_->own);
  if (auto report =
          run_layer(embedding_->layer, observer, config_.n_layer + 1, layer_times_.front());
      !report) {
    return tl::make_unexpected(report.error());
  }
  std::span<const float> x = embedding_->output;
  if (tracer) tracer->record_tensor("token_embd", x);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    Block& block = blocks_[i];
    const auto layer = static_cast<std::uint32_t>(i);
    std::span<const float> input = x;
    if (tracer && tracer->kinds().activations && tracer->layer_traced(layer)) {
      tracer->record_activation(layer, trace::ActivationPoint::Input, x);
      if (shared) {  // the block writes its output over x
        tracing_->input.assign(x.begin(), x.end());
        input = tracing_->input;
      }
    }
    block.bind(shared ? *shared : block.own, x, n, n_past_, cell);
    if (auto report = run_layer(block.layer, observer, i, layer_times_[i + 1]); !report) {
      return tl::make_unexpected(report.error());
    }
    x = block.outputs.out;
    if (tracer) trace_block(*tracer, i, input, n, last, lens);
  }
  if (lens) {
    Tracing& t = *tracing_;
    t.lens.resize(config_.n_layer * config_.n_vocab);
    t.lens_head.run({t.lens_x, config_.n_layer}, t.lens, backend_);
  }
  head_->norm_in.x = x.last(e);
  if (auto report = run_layer(head_->layer, observer, config_.n_layer, layer_times_.back());
      !report) {
    return tl::make_unexpected(report.error());
  }
  if (tracer) {
    tracer->record_tensor("output_norm", head_->xn);
    tracer->record_tensor("logits", head_->logits);
    if (last && tracer->quant_error_layer(layers_measured()) == config_.n_layer) {
      std::vector<float>& reference = tracing_->reference;
      reference.resize(config_.n_vocab);
      quant::dequantized_matvec(weights_->output, head_->xn, reference, *pool_);
      tracer->record_quant_error("output", static_cast<std::uint32_t>(config_.n_layer),
                                 head_->logits, reference);
    }
  }
  last_token_ = tokens.back();
  last_cell_ = static_cast<CellIndex>(cell + n - 1);
  last_was_batch_ = shared != nullptr;
  return std::span<const float>(head_->logits);
}

void LlamaDecoder::trace_block(trace::ModelTracer& tracer, std::size_t i, std::span<const float> x,
                               std::size_t tokens, bool last, bool lens) {
  using trace::ActivationPoint;
  const Block& block = blocks_[i];
  const Block::Outputs& o = block.outputs;
  const auto layer = static_cast<std::uint32_t>(i);
  Tracing& t = *tracing_;
  const std::size_t e = config_.n_embd;
  if (lens) {  // the LM head runs on them after the last block
    t.lens_x.resize(config_.n_layer * e);
    ops::rms_norm(o.out.last(e), weights_->output_norm, config_.rms_eps,
                  std::span(t.lens_x).subspan(i * e, e), backend_);
  }
  if (!tracer.layer_traced(layer)) return;
  if (tracer.kinds().activations) {
    tracer.record_activation(layer, ActivationPoint::AfterNorm, o.xn);
    tracer.record_activation(layer, ActivationPoint::AfterAttention, o.h, x);
    tracer.record_activation(layer, ActivationPoint::AfterFfn, o.down);
    tracer.record_activation(layer, ActivationPoint::Output, o.out, o.h);
  }
  const auto last_pos = static_cast<std::int64_t>(n_past_ + tokens - 1);
  if (last && tracer.kinds().attention && tracer.sampled()) {
    const AttentionOp::Input& in = block.in.attention;
    t.weights.resize(in.cells);
    for (std::size_t head = 0; head < config_.n_head; ++head) {
      if (!tracer.head_traced(static_cast<std::uint32_t>(head))) continue;
      block.attention.op().softmax_weights(in, head, t.weights, backend_);
      tracer.record_attention(layer, static_cast<std::uint32_t>(head), last_pos, t.weights);
    }
  }
  if (last && tracer.quant_error_layer(layers_measured()) == i) {
    // The last token's row of a brick's input and output.
    const auto last_row = [tokens](std::span<const float> rows) {
      return rows.subspan((tokens - 1) * (rows.size() / tokens), rows.size() / tokens);
    };
    const LlamaLayerWeights& w = block.w;
    const auto measure = [&](const char* what, const quant::WeightMatrix& weights,
                             std::span<const float> in, std::span<const float> out) {
      t.reference.resize(weights.rows());
      quant::dequantized_matvec(weights, last_row(in), t.reference, *pool_);
      tracer.record_quant_error(block_name(i, what), layer, last_row(out), t.reference);
    };
    const std::span<const float> xn = last_row(o.xn);
    std::vector<float>& qkv = t.reference;
    qkv.resize(w.wq.rows() + w.wk.rows() + w.wv.rows());
    std::span<float> rows(qkv);
    quant::dequantized_matvec(w.wq, xn, rows.first(w.wq.rows()), *pool_);
    quant::dequantized_matvec(w.wk, xn, rows.subspan(w.wq.rows(), w.wk.rows()), *pool_);
    quant::dequantized_matvec(w.wv, xn, rows.last(w.wv.rows()), *pool_);
    tracer.record_quant_error(block_name(i, "qkv"), layer, last_row(o.qkv), qkv);
    measure("attn_output", w.wo, o.attn, o.o);
    const std::span<const float> hn = last_row(o.hn);
    t.gate.resize(w.gate.rows());
    t.up.resize(w.up.rows());
    quant::dequantized_matvec(w.gate, hn, t.gate, *pool_);
    quant::dequantized_matvec(w.up, hn, t.up, *pool_);
    ops::swiglu(t.gate, t.up, t.gate, Backend::Scalar);
    tracer.record_quant_error(block_name(i, "gate_up"), layer, last_row(o.act), t.gate);
    measure("ffn_down", w.down, o.act, o.down);
  }
}

std::span<const float> LlamaDecoder::layer_logits() const noexcept {
  return tracing_->lens_valid ? std::span<const float>(tracing_->lens) : std::span<const float>();
}

Result<std::span<const float>> LlamaDecoder::step(TokenId token, LayerObserver* observer) {
  return evaluate(std::span(&token, 1), observer);
}

Result<std::span<const float>> LlamaDecoder::evaluate(std::span<const TokenId> tokens,
                                                      LayerObserver* observer) {
  if (tokens.empty()) throw InvalidArgument("llama decoder: evaluate() needs at least one token");
  require_room(tokens);
  tracing_->lens_valid = false;
  trace::ForwardScope forward(tracer_, static_cast<std::int64_t>(n_past_));
  // The logit lens only when a caller opened the forward: it records them with its chosen token.
  const bool lens = tracer_ && !forward.owns() && tracer_->logit_lens_due();
  Result<std::span<const float>> logits;
  for (std::size_t first = 0; first < tokens.size(); first += options_.n_batch) {
    const auto batch = tokens.subspan(first, std::min(options_.n_batch, tokens.size() - first));
    std::vector<Pos> positions(batch.size());
    for (std::size_t t = 0; t < batch.size(); ++t) positions[t] = static_cast<Pos>(n_past_ + t);
    const auto slot = cache_.find_slot(0, positions, Placement::Contiguous);
    if (!slot) {
      throw CapacityError(
          fmt::format("llama decoder: the context of {} positions is full", options_.n_ctx));
    }
    const CellIndex cell = slot->cells.front();
    for (std::size_t t = 0; t < slot->cells.size(); ++t) {
      if (slot->cells[t] != cell + t)
        throw StateError("llama decoder: the KV cache gave a batch scattered cells");
    }
    const bool last_batch = first + batch.size() == tokens.size();
    logits = run(batch, cell, batch.size() == 1 ? nullptr : &batch_buffers(batch.size()), observer,
                 tracer_, last_batch, lens && last_batch);
    if (!logits) return logits;
    n_past_ += batch.size();
  }
  tracing_->lens_valid = lens;
  if (tracer_) tracer_->record_kv_cache(n_past_, cache_);
  return logits;
}

void LlamaDecoder::reset() {
  cache_.clear();
  n_past_ = 0;
  last_was_batch_ = false;
}

std::vector<VerifyReport> LlamaDecoder::verify() {
  if (last_was_batch_) {
    // The one-token bricks, at the last token's position and cell: it rewrites the K and V it
    // stored there with the values one token computes.
    // The replay is not part of the run: its time is not counted.
    const std::vector<LayerTime> times = layer_times_;
    --n_past_;
    const TokenId token = last_token_;
    const auto replay = run(std::span(&token, 1), last_cell_, nullptr, nullptr, nullptr, true, false);
    ++n_past_;
    layer_times_ = times;
    (void)replay;
  }
  std::vector<VerifyReport> reports;
  reports.push_back(embedding_->brick.verify(embedding_->input));
  for (Block& block : blocks_) {
    for (const auto& verify_brick : block.verifiers) reports.push_back(verify_brick());
  }
  reports.push_back(head_->norm.verify(head_->norm_in));
  reports.push_back(head_->lm_head.verify(head_->lm_head_in));
  return reports;
}

}  // namespace brick::model
