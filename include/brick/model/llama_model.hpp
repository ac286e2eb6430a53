#pragma once
// A llama model opened from a GGUF file, read the way llama.cpp reads it: the hyperparameters from
// the llama.* keys (with llama.cpp's defaults for the keys a file may leave out), the SentencePiece
// vocabulary from tokenizer.ggml.*, and the weights as views into the file mapping (nothing is
// copied; the model keeps the mapping alive).
//
// Anything llama.cpp would compute differently from what Brick computes is refused with a
// FormatError naming the key or tensor, never silently ignored: another architecture, another
// tokenizer, RoPE scaling, experts, biases, per-layer sizes that differ, tensors a llama model does
// not have.
#include <filesystem>
#include <optional>
#include <string>

#include "brick/gguf/gguf_file.hpp"
#include "brick/model/file_type.hpp"
#include "brick/model/llama_config.hpp"
#include "brick/model/llama_weights.hpp"
#include "brick/model/vocab.hpp"

namespace brick::model {

// The hyperparameters of a llama GGUF (validated).
LlamaConfig llama_config(const gguf::GgufFile& file);

// The vocabulary of a llama GGUF whose tokenizer.ggml.model is "llama" (SentencePiece).
Vocab llama_vocab(const gguf::Metadata& metadata);

class LlamaModel {
 public:
  // Opens and maps `path`, then faults the mapping's pages in (MADV_POPULATE_READ, where the kernel
  // has it). IoError when it cannot be read, FormatError when it is not a llama model Brick runs.
  static LlamaModel open(const std::filesystem::path& path);
  explicit LlamaModel(gguf::GgufFile file);

  LlamaModel(LlamaModel&&) noexcept;
  LlamaModel& operator=(LlamaModel&&) noexcept;
  ~LlamaModel();

  const gguf::GgufFile& file() const noexcept { return file_; }
  const LlamaConfig& config() const noexcept { return config_; }
  const Vocab& vocab() const noexcept { return vocab_; }
  const LlamaWeights& weights() const noexcept { return weights_; }
  // Drops from this process the mapped pages of `matrix`, one of this model's weights that a copy
  // has replaced (a decoder's repacked one: LlamaOptions::on_repacked), so that it takes no memory
  // twice; touched again, the pages read back from the file. Only whole pages within the matrix go.
  // Nothing happens for a file not mapped, or a matrix whose bytes are not in the mapping.
  void release(const quant::WeightMatrix& matrix) const;
  // general.file_type, when it is one Brick names.
  std::optional<FileType> file_type() const noexcept { return file_type_; }
  // general.name, or the file's stem.
  const std::string& name() const noexcept { return name_; }

 private:
  gguf::GgufFile file_;
  LlamaConfig config_;
  Vocab vocab_;
  LlamaWeights weights_;
  std::optional<FileType> file_type_;
  std::string name_;
};

}  // namespace brick::model
