#include "brick/model/llama_model.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/advice.hpp"
#include "brick/runtime/memory/mapped_file.hpp"

namespace brick::model {
namespace {

using gguf::Array;
using gguf::GgufFile;
using gguf::Metadata;
using gguf::TensorInfo;

[[noreturn]] void refuse(const GgufFile& file, const std::string& what) {
  throw FormatError(fmt::format("{}: {}", file.name(), what));
}

std::size_t require_u32(const GgufFile& file, const char* key) {
  const std::uint32_t value = file.metadata().get<std::uint32_t>(key);
  if (value == 0) refuse(file, fmt::format("{} is 0; it must be positive", key));
  return value;
}

// A per-layer size stored as one u32 or as an array of one value per layer (llama.cpp accepts
// both); Brick runs only models whose layers all have the same size.
std::optional<std::size_t> per_layer_size(const GgufFile& file, const char* key,
                                          std::size_t n_layer) {
  const gguf::Value* value = file.metadata().find_value(key);
  if (value == nullptr) return std::nullopt;
  if (const auto* scalar = value->get_if<std::uint32_t>()) return *scalar;
  const Array* array = value->get_if<Array>();
  if (array == nullptr) {
    refuse(file, fmt::format("{} has type {}; llama.cpp reads a u32 or an array of them", key,
                             name(value->type())));
  }
  std::vector<std::uint64_t> sizes;
  if (const auto* u32 = std::get_if<std::vector<std::uint32_t>>(&array->values)) {
    sizes.assign(u32->begin(), u32->end());
  } else if (const auto* i32 = std::get_if<std::vector<std::int32_t>>(&array->values)) {
    for (std::int32_t v : *i32) sizes.push_back(v < 0 ? 0 : static_cast<std::uint64_t>(v));
  } else {
    refuse(file, fmt::format("{} is an array of {}; llama.cpp reads u32 or i32 elements", key,
                             name(array->element_type())));
  }
  if (sizes.size() != n_layer) {
    refuse(file,
           fmt::format("{} has {} values for llama.block_count {}", key, sizes.size(), n_layer));
  }
  for (std::uint64_t s : sizes) {
    if (s != sizes.front()) {
      refuse(
          file,
          fmt::format(
              "{} differs between layers ({} and {}); Brick runs models whose layers have one size",
              key, sizes.front(), s));
    }
  }
  return static_cast<std::size_t>(sizes.front());
}

// Keys that change what llama.cpp computes and that Brick does not implement: present with a
// value other than the neutral one, they make the model unrunnable here.
void refuse_unsupported_keys(const GgufFile& file, std::size_t head_dim) {
  const Metadata& m = file.metadata();
  if (const auto* type = m.find<std::string>("llama.rope.scaling.type"); type && *type != "none") {
    refuse(file, fmt::format("llama.rope.scaling.type is '{}'; Brick implements unscaled RoPE only",
                             *type));
  }
  for (const char* key : {"llama.rope.scaling.factor", "llama.rope.scale_linear"}) {
    if (const float* factor = m.find<float>(key); factor && *factor != 0.0f && *factor != 1.0f) {
      refuse(file, fmt::format("{} is {}; Brick implements unscaled RoPE only", key, *factor));
    }
  }
  for (const char* key : {"llama.expert_count", "llama.expert_used_count"}) {
    if (const auto* experts = m.find<std::uint32_t>(key); experts && *experts != 0) {
      refuse(file, fmt::format("{} is {}; Brick runs dense llama models, not mixtures of experts",
                               key, *experts));
    }
  }
  for (const char* key : {"llama.attention.key_length", "llama.attention.value_length"}) {
    if (const auto* length = m.find<std::uint32_t>(key); length && *length != head_dim) {
      refuse(file, fmt::format("{} is {}; Brick needs the head size llama.embedding_length / "
                               "llama.attention.head_count = {}",
                               key, *length, head_dim));
    }
  }
}

std::string layer_tensor(std::size_t layer, const char* what) {
  return fmt::format("blk.{}.{}.weight", layer, what);
}

class TensorBinder {
 public:
  explicit TensorBinder(const GgufFile& file) : file_(file) {}

  quant::WeightMatrix matrix(const std::string& name, std::size_t rows, std::size_t cols) {
    const TensorInfo& t = take(name);
    if (t.n_dims != 2 || t.ne[0] != cols || t.ne[1] != rows) {
      refuse(file_, fmt::format("tensor '{}' has shape {}; expected {{{}, {}}}", name, shape(t),
                                cols, rows));
    }
    if (!quant::is_computable(t.type)) {
      refuse(file_,
             fmt::format(
                 "tensor '{}' is {}; Brick computes with f32, f16, bf16, q8_0, q4_K, q5_K and q6_K",
                 name, quant::name(t.type)));
    }
    return {t.type, file_.tensor_data(t), rows, cols};
  }

  std::span<const float> norm(const std::string& name, std::size_t n) {
    const TensorInfo& t = take(name);
    if (t.n_dims != 1 || t.ne[0] != n) {
      refuse(file_, fmt::format("tensor '{}' has shape {}; expected {{{}}}", name, shape(t), n));
    }
    if (t.type != quant::TensorType::F32) {
      refuse(file_,
             fmt::format("tensor '{}' is {}; norm weights must be f32", name, quant::name(t.type)));
    }
    const std::span<const std::byte> bytes = file_.tensor_data(t);
    return {reinterpret_cast<const float*>(bytes.data()), n};
  }

  bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }

  // Every tensor of the file must have been bound: llama.cpp refuses files with tensors it does
  // not use, and a bias or expert tensor would change what it computes.
  void require_all_bound() const {
    for (const TensorInfo& t : file_.tensors()) {
      if (bound_.count(t.name) == 0) {
        refuse(file_,
               fmt::format(
                   "tensor '{}' is not part of a llama model Brick runs (no biases, experts or "
                   "RoPE factors)",
                   t.name));
      }
    }
  }

 private:
  const TensorInfo& take(const std::string& name) {
    const TensorInfo* t = file_.find_tensor(name);
    if (t == nullptr) refuse(file_, fmt::format("tensor '{}' is missing", name));
    bound_.insert(name);
    return *t;
  }

  static std::string shape(const TensorInfo& t) {
    std::string out = "{";
    for (std::uint32_t i = 0; i < t.n_dims; ++i) out += fmt::format("{}{}", i ? ", " : "", t.ne[i]);
    return out + "}";
  }

  const GgufFile& file_;
  std::set<std::string, std::less<>> bound_;
};

LlamaWeights bind_weights(const GgufFile& file, const LlamaConfig& c) {
  TensorBinder tensors(file);
  LlamaWeights w;
  w.token_embd = tensors.matrix("token_embd.weight", c.n_vocab, c.n_embd);
  w.layers.resize(c.n_layer);
  for (std::size_t i = 0; i < c.n_layer; ++i) {
    LlamaLayerWeights& l = w.layers[i];
    l.attn_norm = tensors.norm(layer_tensor(i, "attn_norm"), c.n_embd);
    l.wq = tensors.matrix(layer_tensor(i, "attn_q"), c.n_embd, c.n_embd);
    l.wk = tensors.matrix(layer_tensor(i, "attn_k"), c.kv_dim(), c.n_embd);
    l.wv = tensors.matrix(layer_tensor(i, "attn_v"), c.kv_dim(), c.n_embd);
    l.wo = tensors.matrix(layer_tensor(i, "attn_output"), c.n_embd, c.n_embd);
    l.ffn_norm = tensors.norm(layer_tensor(i, "ffn_norm"), c.n_embd);
    l.gate = tensors.matrix(layer_tensor(i, "ffn_gate"), c.n_ff, c.n_embd);
    l.up = tensors.matrix(layer_tensor(i, "ffn_up"), c.n_ff, c.n_embd);
    l.down = tensors.matrix(layer_tensor(i, "ffn_down"), c.n_embd, c.n_ff);
  }
  w.output_norm = tensors.norm("output_norm.weight", c.n_embd);
  w.tied_output = !tensors.has("output.weight");
  w.output = w.tied_output ? w.token_embd : tensors.matrix("output.weight", c.n_vocab, c.n_embd);
  tensors.require_all_bound();
  try {
    w.validate(c);
  } catch (const FormatError& e) {
    refuse(file, e.what());
  }
  return w;
}

}  // namespace

LlamaConfig llama_config(const GgufFile& file) {
  const Metadata& m = file.metadata();
  const std::string& architecture = m.get<std::string>("general.architecture");
  if (architecture != "llama") {
    refuse(file,
           fmt::format("general.architecture is '{}'; Brick runs 'llama' models", architecture));
  }
  LlamaConfig c;
  c.n_ctx_train = require_u32(file, "llama.context_length");
  c.n_embd = require_u32(file, "llama.embedding_length");
  c.n_layer = require_u32(file, "llama.block_count");
  c.rms_eps = m.get<float>("llama.attention.layer_norm_rms_epsilon");
  const auto n_ff = per_layer_size(file, "llama.feed_forward_length", c.n_layer);
  const auto n_head = per_layer_size(file, "llama.attention.head_count", c.n_layer);
  if (!n_ff) refuse(file, "llama.feed_forward_length is missing");
  if (!n_head) refuse(file, "llama.attention.head_count is missing");
  c.n_ff = *n_ff;
  c.n_head = *n_head;
  c.n_head_kv = per_layer_size(file, "llama.attention.head_count_kv", c.n_layer).value_or(c.n_head);
  if (const auto* n_rot = m.find<std::uint32_t>("llama.rope.dimension_count")) {
    c.n_rot = *n_rot;
  } else {
    c.n_rot = c.head_dim();
  }
  if (const float* base = m.find<float>("llama.rope.freq_base")) c.rope_freq_base = *base;
  const TensorInfo& embd = file.tensor("token_embd.weight");
  c.n_vocab = static_cast<std::size_t>(embd.ne[1]);
  if (const auto* vocab_size = m.find<std::uint32_t>("llama.vocab_size");
      vocab_size && *vocab_size != c.n_vocab) {
    refuse(file, fmt::format("llama.vocab_size is {} but token_embd.weight has {} rows",
                             *vocab_size, c.n_vocab));
  }
  try {
    c.validate();
  } catch (const FormatError& e) {
    refuse(file, e.what());
  }
  refuse_unsupported_keys(file, c.head_dim());
  return c;
}

Vocab llama_vocab(const Metadata& m) {
  const std::string& model = m.get<std::string>("tokenizer.ggml.model");
  if (model != "llama") {
    throw FormatError(
        fmt::format("tokenizer.ggml.model is '{}'; Brick implements the SentencePiece ('llama') "
                    "tokenizer",
                    model));
  }
  const std::span<const std::string> tokens = m.get_array<std::string>("tokenizer.ggml.tokens");
  const std::vector<std::string_view> pieces(tokens.begin(), tokens.end());
  SpecialTokens special;
  const auto id = [&](const char* key, TokenId fallback) {
    const std::uint32_t* value = m.find<std::uint32_t>(key);
    if (value == nullptr) return fallback;
    if (*value > static_cast<std::uint32_t>(INT32_MAX)) {
      throw FormatError(fmt::format("{} is {}, outside the vocabulary", key, *value));
    }
    return static_cast<TokenId>(*value);
  };
  special.bos = id("tokenizer.ggml.bos_token_id", special.bos);
  special.eos = id("tokenizer.ggml.eos_token_id", special.eos);
  special.unk = id("tokenizer.ggml.unknown_token_id", special.unk);
  if (const auto* add_bos = m.find<gguf::Bool>("tokenizer.ggml.add_bos_token"))
    special.add_bos = add_bos->value;
  if (const auto* prefix = m.find<gguf::Bool>("tokenizer.ggml.add_space_prefix")) {
    special.add_space_prefix = prefix->value;
  }
  return Vocab(pieces, m.find_array<float>("tokenizer.ggml.scores"),
               m.find_array<std::int32_t>("tokenizer.ggml.token_type"), special);
}

LlamaModel LlamaModel::open(const std::filesystem::path& path) {
  LlamaModel model(GgufFile::open(path));
  // Every page of the checked file mapped in now, as llama.cpp maps a model (MAP_POPULATE): the
  // first token would otherwise fault page by page through the weights. Only a speed-up, so a
  // kernel without MADV_POPULATE_READ (before Linux 5.14) just leaves the pages to fault later.
  if (const MappedFile* mapping = model.file_.mapping(); mapping != nullptr && mapping->size() > 0) {
    try {
      mapping->advise(Advice::PopulateRead);
    } catch (const IoError&) {
    }
  }
  return model;
}

LlamaModel::LlamaModel(GgufFile file)
    : file_(std::move(file)),
      config_(llama_config(file_)),
      vocab_(llama_vocab(file_.metadata())),
      weights_(bind_weights(file_, config_)) {
  if (vocab_.size() != config_.n_vocab) {
    refuse(file_,
           fmt::format("tokenizer.ggml.tokens has {} tokens but token_embd.weight has {} rows",
                       vocab_.size(), config_.n_vocab));
  }
  if (const auto* type = file_.metadata().find<std::uint32_t>("general.file_type")) {
    file_type_ = file_type_from_id(*type);
  }
  if (const auto* name = file_.metadata().find<std::string>("general.name")) {
    name_ = *name;
  } else {
    name_ = std::filesystem::path(file_.name()).stem().string();
  }
}

void LlamaModel::release(const quant::WeightMatrix& matrix) const {
  const MappedFile* const mapping = file_.mapping();
  const std::span<const std::byte> bytes = matrix.data();
  if (mapping == nullptr || bytes.empty()) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(mapping->data());
  const auto at = reinterpret_cast<std::uintptr_t>(bytes.data());
  if (at < begin || at - begin > mapping->size() || bytes.size() > mapping->size() - (at - begin)) return;
  advise(bytes, Advice::DontNeed);
}

LlamaModel::LlamaModel(LlamaModel&&) noexcept = default;
LlamaModel& LlamaModel::operator=(LlamaModel&&) noexcept = default;
LlamaModel::~LlamaModel() = default;

}  // namespace brick::model
