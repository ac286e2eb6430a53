#include <fmt/format.h>

#include <cmath>

#include "brick/core/error.hpp"
#include "brick/model/llama_config.hpp"
#include "brick/model/llama_weights.hpp"

namespace brick::model {
namespace {

void require_positive(std::size_t value, const char* key) {
  if (value == 0) throw FormatError(fmt::format("llama model: {} is 0; it must be positive", key));
}

void require_finite_positive(float value, const char* key) {
  if (!std::isfinite(value) || value <= 0.0f) {
    throw FormatError(fmt::format("llama model: {} is {}; it must be finite and positive", key, value));
  }
}

std::string layer_tensor(std::size_t layer, const char* name) { return fmt::format("blk.{}.{}.weight", layer, name); }

void require_matrix(const quant::WeightMatrix& w, const std::string& name, std::size_t rows, std::size_t cols) {
  if (w.rows() != rows || w.cols() != cols) {
    throw FormatError(fmt::format("llama model: tensor {} is {} x {} (ggml ne0 = {}); expected {} x {}", name,
                                  w.rows(), w.cols(), w.cols(), rows, cols));
  }
  try {
    quant::validate(w, name);
  } catch (const InvalidArgument& e) {
    throw FormatError(fmt::format("llama model: {}", e.what()));
  }
}

void require_norm(std::span<const float> norm, const std::string& name, std::size_t n_embd) {
  if (norm.size() != n_embd) {
    throw FormatError(fmt::format("llama model: tensor {} has {} f32 values; expected {}", name, norm.size(), n_embd));
  }
}

}  // namespace

void LlamaConfig::validate() const {
  require_positive(n_vocab, "the vocabulary size (token_embd rows)");
  require_positive(n_embd, "llama.embedding_length");
  require_positive(n_layer, "llama.block_count");
  require_positive(n_head, "llama.attention.head_count");
  require_positive(n_head_kv, "llama.attention.head_count_kv");
  require_positive(n_ff, "llama.feed_forward_length");
  require_positive(n_ctx_train, "llama.context_length");
  if (n_embd % n_head != 0 || head_dim() % 2 != 0) {
    throw FormatError(fmt::format("llama model: llama.embedding_length {} does not split into "
                                  "llama.attention.head_count {} heads of an even size",
                                  n_embd, n_head));
  }
  if (n_head % n_head_kv != 0) {
    throw FormatError(fmt::format("llama model: llama.attention.head_count {} is not a multiple of "
                                  "llama.attention.head_count_kv {}",
                                  n_head, n_head_kv));
  }
  if (n_rot != head_dim()) {
    throw FormatError(fmt::format("llama model: llama.rope.dimension_count is {}; llama.cpp requires the head "
                                  "size {} for this architecture",
                                  n_rot, head_dim()));
  }
  require_finite_positive(rms_eps, "llama.attention.layer_norm_rms_epsilon");
  require_finite_positive(rope_freq_base, "llama.rope.freq_base");
}

void LlamaWeights::validate(const LlamaConfig& c) const {
  require_matrix(token_embd, "token_embd.weight", c.n_vocab, c.n_embd);
  if (layers.size() != c.n_layer) {
    throw FormatError(fmt::format("llama model: {} blocks of tensors for llama.block_count {}", layers.size(),
                                  c.n_layer));
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const LlamaLayerWeights& l = layers[i];
    require_norm(l.attn_norm, layer_tensor(i, "attn_norm"), c.n_embd);
    require_matrix(l.wq, layer_tensor(i, "attn_q"), c.n_embd, c.n_embd);
    require_matrix(l.wk, layer_tensor(i, "attn_k"), c.kv_dim(), c.n_embd);
    require_matrix(l.wv, layer_tensor(i, "attn_v"), c.kv_dim(), c.n_embd);
    require_matrix(l.wo, layer_tensor(i, "attn_output"), c.n_embd, c.n_embd);
    require_norm(l.ffn_norm, layer_tensor(i, "ffn_norm"), c.n_embd);
    require_matrix(l.gate, layer_tensor(i, "ffn_gate"), c.n_ff, c.n_embd);
    require_matrix(l.up, layer_tensor(i, "ffn_up"), c.n_ff, c.n_embd);
    require_matrix(l.down, layer_tensor(i, "ffn_down"), c.n_embd, c.n_ff);
  }
  require_norm(output_norm, "output_norm.weight", c.n_embd);
  require_matrix(output, tied_output ? "token_embd.weight (tied output)" : "output.weight", c.n_vocab, c.n_embd);
}

double LlamaWeights::bytes() const noexcept {
  double total = quant::bytes(token_embd) + 4.0 * static_cast<double>(output_norm.size());
  if (!tied_output) total += quant::bytes(output);
  for (const LlamaLayerWeights& l : layers) {
    total += 4.0 * static_cast<double>(l.attn_norm.size() + l.ffn_norm.size());
    for (const auto* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) total += quant::bytes(*w);
  }
  return total;
}

}  // namespace brick::model
