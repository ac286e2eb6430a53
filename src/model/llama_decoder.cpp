#include "brick/model/llama_decoder.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/model/attention.hpp"
#include "brick/ops/elementwise.hpp"
#include "brick/ops/make_brick.hpp"
#include "brick/ops/rms_norm.hpp"
#include "brick/ops/rope.hpp"
#include "brick/quant/fused_ops.hpp"
#include "brick/quant/projection_op.hpp"

namespace brick::model {
namespace {

// A brick with the standard assertions and a budget of its bytes at the options' bandwidth.
template <class Op>
ComputeBrick<Op> make(Op op, const typename Op::Input& input, const LlamaOptions& options, Backend backend) {
  const double bytes = op.cost(input).bytes;
  const auto budget =
      TokenBudget::from_us_per_token(std::max(bytes, 1.0) / (options.bandwidth_budget.gb_per_second() * 1e3));
  return ops::make_brick(std::move(op), backend, budget, options.policy);
}

std::string block_name(std::size_t index, const char* what) { return fmt::format("blk.{}.{}", index, what); }

KvCacheShape cache_shape(const LlamaConfig& config, const LlamaOptions& options) {
  if (options.n_ctx == 0 || options.n_ctx > config.n_ctx_train) {
    throw InvalidArgument(fmt::format("llama decoder: a context of {} positions; the model allows 1..{}",
                                      options.n_ctx, config.n_ctx_train));
  }
  return {config.n_layer, options.n_ctx, config.n_head_kv, config.head_dim(), options.kv_type};
}

const LlamaConfig& validated(const LlamaConfig& config, const LlamaWeights& weights) {
  config.validate();
  weights.validate(config);
  return config;
}

}  // namespace

struct LlamaDecoder::Embedding {
  quant::EmbeddingOp::Input input;
  ComputeBrick<quant::EmbeddingOp> brick;
  BrickLayer layer{"embedding"};

  Embedding(const LlamaWeights& w, std::span<float> out, const LlamaOptions& options, Backend backend)
      : brick(make(quant::EmbeddingOp(w.token_embd), input, options, backend)) {
    layer.add(brick, input, out);
  }
};

struct LlamaDecoder::Block {
  std::vector<float> xn, qkv, qk_rot, kv, attn, o, h, hn, act, down, out;

  ops::RmsNormOp::Input attn_norm_in;
  quant::FusedQKVOp::Input qkv_in;
  ops::RopeOp::Input rope_in;
  KvWriteOp::Input kv_in;
  AttentionOp::Input attention_in;
  quant::ProjectionOp::Input wo_in;
  ops::AddOp::Input attn_residual_in;
  ops::RmsNormOp::Input ffn_norm_in;
  quant::FusedGateUpOp::Input gate_up_in;
  quant::ProjectionOp::Input down_in;
  ops::AddOp::Input ffn_residual_in;

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

  Block(std::size_t index, const LlamaConfig& c, const LlamaLayerWeights& w, std::span<const float> x,
        KvCache& cache, ThreadPool& pool, const LlamaOptions& options, Backend backend)
      : xn(c.n_embd),
        qkv(c.n_embd + 2 * c.kv_dim()),
        qk_rot(c.n_embd + c.kv_dim()),
        kv(2 * c.kv_dim()),
        attn(c.n_embd),
        o(c.n_embd),
        h(c.n_embd),
        hn(c.n_embd),
        act(c.n_ff),
        down(c.n_embd),
        out(c.n_embd),
        attn_norm_in{x, w.attn_norm, c.rms_eps},
        qkv_in{xn},
        rope_in{std::span<const float>(qkv).first(qk_rot.size()),
                {c.head_dim(), 0, c.rope_freq_base, ops::RopeLayout::Normal}},
        kv_in{std::span<const float>(qk_rot).subspan(c.n_embd), std::span<const float>(qkv).subspan(qk_rot.size()),
              index, 0},
        attention_in{std::span<const float>(qk_rot).first(c.n_embd), index, 1},
        wo_in{attn},
        attn_residual_in{x, o},
        ffn_norm_in{h, w.ffn_norm, c.rms_eps},
        gate_up_in{hn},
        down_in{act},
        ffn_residual_in{h, down},
        layer(fmt::format("blk.{}", index)),
        attn_norm(make(ops::RmsNormOp(BrickId::RmsNorm, block_name(index, "attn_norm")), attn_norm_in, options,
                       backend)),
        qkv_proj(make(quant::FusedQKVOp(w.wq, w.wk, w.wv, c.n_head, c.n_head_kv, c.head_dim(), pool), qkv_in,
                      options, backend)),
        rope(make(ops::RopeOp(BrickId::RopeEmbedding, block_name(index, "rope")), rope_in, options, backend)),
        kv_write(make(KvWriteOp(cache, block_name(index, "kv_write")), kv_in, options, backend)),
        attention(make(AttentionOp(cache, {c.n_head, c.n_head_kv, c.head_dim()}, pool, block_name(index, "attention")),
                       attention_in, options, backend)),
        wo(make(quant::ProjectionOp(BrickId::OutputProjection, block_name(index, "attn_output"), w.wo, pool), wo_in,
                options, backend)),
        attn_residual(make(ops::AddOp(BrickId::Residual, block_name(index, "attn_residual")), attn_residual_in,
                           options, backend)),
        ffn_norm(make(ops::RmsNormOp(BrickId::RmsNorm, block_name(index, "ffn_norm")), ffn_norm_in, options,
                      backend)),
        gate_up(make(quant::FusedGateUpOp(w.gate, w.up, pool), gate_up_in, options, backend)),
        ffn_down(make(quant::ProjectionOp(BrickId::DownProjection, block_name(index, "ffn_down"), w.down, pool),
                      down_in, options, backend)),
        ffn_residual(make(ops::AddOp(BrickId::Residual, block_name(index, "ffn_residual")), ffn_residual_in, options,
                          backend)) {
    add(attn_norm, attn_norm_in, xn);
    add(qkv_proj, qkv_in, qkv);
    add(rope, rope_in, qk_rot);
    add(kv_write, kv_in, kv);
    add(attention, attention_in, attn);
    add(wo, wo_in, o);
    add(attn_residual, attn_residual_in, h);
    add(ffn_norm, ffn_norm_in, hn);
    add(gate_up, gate_up_in, act);
    add(ffn_down, down_in, down);
    add(ffn_residual, ffn_residual_in, out);
  }

  template <class Op>
  void add(ComputeBrick<Op>& brick, const typename Op::Input& input, std::span<float> output) {
    layer.add(brick, input, output);
    verifiers.emplace_back([&brick, &input] { return brick.verify(input); });
  }

  void set_position(std::size_t position, CellIndex cell) {
    rope_in.params.position = position;
    kv_in.cell = cell;
    attention_in.cells = static_cast<std::size_t>(cell) + 1;
  }
};

struct LlamaDecoder::Head {
  std::vector<float> xn, logits;
  ops::RmsNormOp::Input norm_in;
  quant::ProjectionOp::Input lm_head_in;
  ComputeBrick<ops::RmsNormOp> norm;
  ComputeBrick<quant::ProjectionOp> lm_head;
  BrickLayer layer{"head"};

  Head(const LlamaConfig& c, const LlamaWeights& w, std::span<const float> x, ThreadPool& pool,
       const LlamaOptions& options, Backend backend)
      : xn(c.n_embd),
        logits(c.n_vocab),
        norm_in{x, w.output_norm, c.rms_eps},
        lm_head_in{xn},
        norm(make(ops::RmsNormOp(BrickId::RmsNorm, "output_norm"), norm_in, options, backend)),
        lm_head(make(quant::ProjectionOp(BrickId::LmHead, "output", w.output, pool), lm_head_in, options, backend)) {
    layer.add(norm, norm_in, xn);
    layer.add(lm_head, lm_head_in, logits);
  }
};

LlamaDecoder::LlamaDecoder(const LlamaConfig& config, const LlamaWeights& weights, ThreadPool& pool,
                           const LlamaOptions& options)
    : config_(validated(config, weights)),
      options_(options),
      backend_(resolve(options.backend)),
      cache_(cache_shape(config_, options)),
      x0_(config_.n_embd) {
  embedding_ = std::make_unique<Embedding>(weights, x0_, options_, backend_);
  std::span<const float> x = x0_;
  for (std::size_t i = 0; i < config_.n_layer; ++i) {
    const Block& block = blocks_.emplace_back(i, config_, weights.layers[i], x, cache_, pool, options_, backend_);
    x = block.out;
  }
  head_ = std::make_unique<Head>(config_, weights, x, pool, options_, backend_);
  layer_times_.push_back({embedding_->layer.name()});
  for (const Block& block : blocks_) layer_times_.push_back({block.layer.name()});
  layer_times_.push_back({head_->layer.name()});
}

LlamaDecoder::~LlamaDecoder() = default;

std::size_t LlamaDecoder::brick_count() const noexcept {
  return embedding_->layer.size() + blocks_.size() * blocks_.front().layer.size() + head_->layer.size();
}

namespace {

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

void LlamaDecoder::require_room(std::span<const TokenId> tokens) const {
  for (const TokenId token : tokens) {
    if (token < 0 || static_cast<std::size_t>(token) >= config_.n_vocab) {
      throw InvalidArgument(fmt::format("llama decoder: token id {} is outside the vocabulary of {}", token,
                                        config_.n_vocab));
    }
  }
  if (tokens.size() > options_.n_ctx - n_past_) {
    throw CapacityError(fmt::format("llama decoder: {} more tokens do not fit the context of {} positions ({} used)",
                                    tokens.size(), options_.n_ctx, n_past_));
  }
}

Result<std::span<const float>> LlamaDecoder::step(TokenId token, LayerObserver* observer) {
  require_room(std::span(&token, 1));
  const Pos pos[1] = {static_cast<Pos>(n_past_)};
  const auto slot = cache_.find_slot(0, pos, Placement::Contiguous);
  if (!slot) {
    throw CapacityError(fmt::format("llama decoder: the context of {} positions is full", options_.n_ctx));
  }
  embedding_->input.token = token;
  if (auto report = run_layer(embedding_->layer, observer, config_.n_layer + 1, layer_times_.front()); !report) {
    return tl::make_unexpected(report.error());
  }
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    blocks_[i].set_position(n_past_, slot->cells.front());
    if (auto report = run_layer(blocks_[i].layer, observer, i, layer_times_[i + 1]); !report) {
      return tl::make_unexpected(report.error());
    }
  }
  if (auto report = run_layer(head_->layer, observer, config_.n_layer, layer_times_.back()); !report) {
    return tl::make_unexpected(report.error());
  }
  ++n_past_;
  return std::span<const float>(head_->logits);
}

Result<std::span<const float>> LlamaDecoder::evaluate(std::span<const TokenId> tokens, LayerObserver* observer) {
  if (tokens.empty()) throw InvalidArgument("llama decoder: evaluate() needs at least one token");
  require_room(tokens);
  Result<std::span<const float>> logits;
  for (const TokenId token : tokens) {
    logits = step(token, observer);
    if (!logits) return logits;
  }
  return logits;
}

void LlamaDecoder::reset() {
  cache_.clear();
  n_past_ = 0;
}

std::vector<VerifyReport> LlamaDecoder::verify() {
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
