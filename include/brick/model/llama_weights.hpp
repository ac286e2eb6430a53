#pragma once
// The tensors of a llama model, viewed, not owned (in a GGUF file mapping, or buffers a test owns),
// under llama.cpp's names: token_embd, blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output,
// ffn_norm, ffn_gate, ffn_up, ffn_down}, output_norm, output (absent: tied to token_embd).
#include <span>
#include <vector>

#include "brick/model/llama_config.hpp"
#include "brick/quant/weight_matrix.hpp"

namespace brick::model {

struct LlamaLayerWeights {
  std::span<const float> attn_norm;  // n_embd
  quant::WeightMatrix wq, wk, wv, wo;
  std::span<const float> ffn_norm;  // n_embd
  quant::WeightMatrix gate, up, down;
};

struct LlamaWeights {
  quant::WeightMatrix token_embd;  // n_vocab rows of n_embd
  std::vector<LlamaLayerWeights> layers;
  std::span<const float> output_norm;  // n_embd
  quant::WeightMatrix output;          // n_vocab rows of n_embd (token_embd when tied)
  bool tied_output = false;

  // Throws FormatError naming the first tensor whose type Brick cannot compute with or whose shape
  // does not match `config` (llama.cpp's tensor name, e.g. "blk.3.attn_k.weight").
  void validate(const LlamaConfig& config) const;
  // Bytes of every tensor (token_embd once when tied).
  double bytes() const noexcept;
};

}  // namespace brick::model
