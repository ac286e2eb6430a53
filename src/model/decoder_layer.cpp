#include "brick/model/decoder_layer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "brick/core/error.hpp"

namespace brick::model {
namespace {

void require_size(std::string_view tensor, std::span<const float> data, std::size_t expected) {
  if (data.size() != expected) {
    throw InvalidArgument(fmt::format("decoder weights: '{}' holds {} floats, the shape needs {}",
                                      tensor, data.size(), expected));
  }
}

std::vector<float> normal(std::size_t n, float stddev, std::mt19937_64& rng) {
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

std::vector<float> around_one(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(0.8f, 1.2f);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

float inverse_sqrt(std::size_t n) {
  return 1.0f / std::sqrt(static_cast<float>(n));
}

}  // namespace

void DecoderShape::validate() const {
  if (hidden == 0 || n_heads == 0 || n_kv_heads == 0 || ffn == 0 || context == 0) {
    throw InvalidArgument(fmt::format(
        "decoder shape: every size must be positive (hidden {}, heads {}, kv heads {}, ffn {}, "
        "context {})",
        hidden, n_heads, n_kv_heads, ffn, context));
  }
  if (hidden % n_heads != 0 || head_dim() % 2 != 0) {
    throw InvalidArgument(fmt::format(
        "decoder shape: hidden {} must split into {} heads of even size", hidden, n_heads));
  }
  if (n_heads % n_kv_heads != 0) {
    throw InvalidArgument(fmt::format("decoder shape: {} heads cannot share {} key/value heads",
                                      n_heads, n_kv_heads));
  }
}

void DecoderWeights::validate(const DecoderShape& s) const {
  require_size("attn_norm", attn_norm, s.hidden);
  require_size("wqkv", wqkv, s.qkv_rows() * s.hidden);
  require_size("wo", wo, s.hidden * s.hidden);
  require_size("ffn_norm", ffn_norm, s.hidden);
  require_size("w_gate", w_gate, s.ffn * s.hidden);
  require_size("w_up", w_up, s.ffn * s.hidden);
  require_size("w_down", w_down, s.hidden * s.ffn);
  require_size("k_cache", k_cache, s.kv_dim() * s.context);
  require_size("v_cache", v_cache, s.kv_dim() * s.context);
}

std::size_t DecoderWeights::bytes() const noexcept {
  const std::size_t floats = attn_norm.size() + wqkv.size() + wo.size() + ffn_norm.size() +
                             w_gate.size() + w_up.size() + w_down.size() + k_cache.size() +
                             v_cache.size();
  return floats * sizeof(float);
}

SyntheticWeights::SyntheticWeights(const DecoderShape& s, std::uint64_t seed) {
  s.validate();
  std::mt19937_64 rng(seed);
  attn_norm_ = around_one(s.hidden, rng);
  wqkv_ = normal(s.qkv_rows() * s.hidden, inverse_sqrt(s.hidden), rng);
  wo_ = normal(s.hidden * s.hidden, inverse_sqrt(s.hidden), rng);
  ffn_norm_ = around_one(s.hidden, rng);
  w_gate_ = normal(s.ffn * s.hidden, inverse_sqrt(s.hidden), rng);
  w_up_ = normal(s.ffn * s.hidden, inverse_sqrt(s.hidden), rng);
  w_down_ = normal(s.hidden * s.ffn, inverse_sqrt(s.ffn), rng);
  k_cache_ = normal(s.kv_dim() * s.context, inverse_sqrt(s.head_dim()), rng);
  v_cache_ = normal(s.kv_dim() * s.context, 1.0f, rng);
}

DecoderWeights SyntheticWeights::view() const noexcept {
  return {attn_norm_, wqkv_, wo_, ffn_norm_, w_gate_, w_up_, w_down_, k_cache_, v_cache_};
}

template <class Op>
ComputeBrick<Op>& DecoderLayer::add_brick(std::deque<ComputeBrick<Op>>& bricks,
                                          std::deque<typename Op::Input>& inputs, Op op,
                                          typename Op::Input input, std::span<float> output) {
  const typename Op::Input& stored = inputs.emplace_back(input);
  const double bytes = op.cost(stored).bytes;
  const auto budget =
      TokenBudget::from_us_per_token(bytes / (options_.bandwidth_budget.gb_per_second() * 1e3));
  ComputeBrick<Op>& brick =
      bricks.emplace_back(ops::make_brick(std::move(op), backend_, budget, options_.policy));
  layer_.add(brick, stored, output);
  verifiers_.emplace_back([&brick, &stored] { return brick.verify(stored); });
  return brick;
}

DecoderLayer::DecoderLayer(const DecoderShape& shape, const DecoderWeights& w,
                           const DecoderOptions& options)
    : shape_(shape), options_(options), backend_(Backend::Scalar), layer_("decoder") {
  shape_.validate();
  w.validate(shape_);
  backend_ = resolve(options.backend);

  const std::size_t hidden = shape_.hidden, ffn = shape_.ffn, context = shape_.context;
  const std::size_t head_dim = shape_.head_dim(), heads = shape_.n_heads;
  const std::size_t group = shape_.n_heads / shape_.n_kv_heads;
  x_.resize(hidden);
  xn_.resize(hidden);
  qkv_.resize(shape_.qkv_rows());
  qk_rot_.resize(hidden + shape_.kv_dim());
  scores_.resize(heads * context);
  probs_.resize(heads * context);
  attn_.resize(hidden);
  o_.resize(hidden);
  h_.resize(hidden);
  hn_.resize(hidden);
  gate_.resize(ffn);
  up_.resize(ffn);
  act_.resize(ffn);
  down_.resize(hidden);
  out_.resize(hidden);

  const auto span_of = [](std::vector<float>& v, std::size_t offset, std::size_t count) {
    return std::span<float>(v).subspan(offset, count);
  };

  add_brick(norms_, norm_inputs_, ops::RmsNormOp(BrickId::RmsNorm, "attn_norm"),
            {x_, w.attn_norm, options_.rms_eps}, xn_);
  add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::QkvProjection, "qkv"),
            {w.wqkv, shape_.qkv_rows(), hidden, xn_}, qkv_);
  // Queries and keys share the rotation, so one rope brick turns all their heads at once.
  add_brick(ropes_, rope_inputs_, ops::RopeOp(BrickId::RopeEmbedding, "rope"),
            {std::span<const float>(qkv_).first(qk_rot_.size()),
             {head_dim, 0, options_.rope_base, options_.rope_layout}},
            qk_rot_);
  for (std::size_t head = 0; head < heads; ++head) {
    const std::size_t kv_head = head / group;
    const std::size_t cache_offset = kv_head * head_dim * context;
    add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::AttentionScore, "attn_score"),
              {w.k_cache.subspan(cache_offset, context * head_dim), context, head_dim,
               span_of(qk_rot_, head * head_dim, head_dim)},
              span_of(scores_, head * context, context));
    add_brick(
        softmaxes_, softmax_inputs_, ops::SoftmaxOp(BrickId::AttentionSoftmax, "attn_softmax"),
        {span_of(scores_, head * context, context)}, span_of(probs_, head * context, context));
    add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::AttentionOutput, "attn_output"),
              {w.v_cache.subspan(cache_offset, head_dim * context), head_dim, context,
               span_of(probs_, head * context, context)},
              span_of(attn_, head * head_dim, head_dim));
  }
  add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::OutputProjection, "attn_out_proj"),
            {w.wo, hidden, hidden, attn_}, o_);
  add_brick(adds_, add_inputs_, ops::AddOp(BrickId::Residual, "attn_residual"), {x_, o_}, h_);
  add_brick(norms_, norm_inputs_, ops::RmsNormOp(BrickId::RmsNorm, "ffn_norm"),
            {h_, w.ffn_norm, options_.rms_eps}, hn_);
  add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::GateProjection, "ffn_gate"),
            {w.w_gate, ffn, hidden, hn_}, gate_);
  add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::UpProjection, "ffn_up"),
            {w.w_up, ffn, hidden, hn_}, up_);
  add_brick(swiglus_, swiglu_inputs_, ops::SwigluOp(BrickId::Activation, "ffn_swiglu"),
            {gate_, up_}, act_);
  add_brick(matvecs_, matvec_inputs_, ops::MatvecOp(BrickId::DownProjection, "ffn_down"),
            {w.w_down, hidden, ffn, act_}, down_);
  add_brick(adds_, add_inputs_, ops::AddOp(BrickId::Residual, "ffn_residual"), {h_, down_}, out_);
}

Result<LayerReport> DecoderLayer::step(std::span<const float> x, std::size_t position,
                                       LayerObserver* observer, std::size_t layer_index) {
  if (x.size() != shape_.hidden) {
    throw InvalidArgument(fmt::format("decoder step: the token has {} floats, hidden is {}",
                                      x.size(), shape_.hidden));
  }
  std::copy(x.begin(), x.end(), x_.begin());
  rope_inputs_.front().params.position = position;
  return layer_.run(observer, layer_index);
}

std::vector<VerifyReport> DecoderLayer::verify() {
  std::vector<VerifyReport> reports;
  reports.reserve(verifiers_.size());
  for (const auto& verify_brick : verifiers_) reports.push_back(verify_brick());
  return reports;
}

}  // namespace brick::model
