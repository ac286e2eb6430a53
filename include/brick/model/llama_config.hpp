#pragma once
// The hyperparameters of a llama-architecture model (GGUF general.architecture = "llama"), with the
// defaults llama.cpp applies to the keys a file may leave out.
#include <cstddef>

namespace brick::model {

struct LlamaConfig {
  std::size_t n_vocab = 0;
  std::size_t n_embd = 0;
  std::size_t n_layer = 0;
  std::size_t n_head = 0;
  std::size_t n_head_kv = 0;   // llama.attention.head_count_kv; n_head when absent (no GQA)
  std::size_t n_ff = 0;
  std::size_t n_ctx_train = 0;  // llama.context_length: the longest context the model was made for
  std::size_t n_rot = 0;        // llama.rope.dimension_count; head_dim when absent
  float rms_eps = 1e-5f;        // llama.attention.layer_norm_rms_epsilon
  float rope_freq_base = 10000.0f;

  std::size_t head_dim() const noexcept { return n_head == 0 ? 0 : n_embd / n_head; }
  std::size_t kv_dim() const noexcept { return n_head_kv * head_dim(); }

  // Throws FormatError naming the GGUF key at fault: a zero size, n_embd not split evenly into
  // n_head heads of even size, n_head not a multiple of n_head_kv, n_rot != head_dim (llama.cpp
  // requires it for this architecture), or an eps / frequency base that is not finite and positive.
  void validate() const;
};

}  // namespace brick::model
