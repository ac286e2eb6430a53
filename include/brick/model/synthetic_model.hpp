#pragma once
// Synthetic llama models, written as GGUF files that llama.cpp loads and runs: the shape of a real
// llama (GQA, a SentencePiece vocabulary with the 256 byte tokens), weights drawn with the
// statistics of trained ones (normal, standard deviation 0.02, a heavy tail of rare outliers; norm
// weights near 1), quantized the way llama-quantize types each tensor under the file type.
// Deterministic for a seed: every row of every tensor has its own generator, so the bytes do not
// depend on the number of threads that drew them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "brick/gguf/gguf_writer.hpp"
#include "brick/model/file_type.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::model {

struct SyntheticModelSpec {
  std::size_t n_layer = 2;
  std::size_t n_embd = 256;
  std::size_t n_head = 4;
  std::size_t n_head_kv = 2;
  std::size_t n_ff = 512;
  std::size_t n_vocab = 512;
  std::size_t n_ctx = 512;  // llama.context_length
  FileType type = FileType::Q4_K_M;
  bool tied = false;  // no output.weight: the output reuses token_embd
  std::uint64_t seed = 42;

  // "tiny" (2 layers, 256 wide: tests), "small" (16 layers, 1024 wide, 32000 tokens: about 150 MB
  // in Q4_K_M, the default model of `brick run`), "base" (the TinyLlama 1.1B shape: about 670 MB in
  // Q4_K_M, bandwidth-bound). InvalidArgument for another name.
  static SyntheticModelSpec preset(std::string_view name);

  // InvalidArgument naming the field: a zero size, n_embd not n_head heads of an even size, n_head
  // not a multiple of n_head_kv, widths (n_embd, n_ff) that the file type's blocks do not divide,
  // a vocabulary too small for the special and byte tokens plus the alphabet (300), or sizes whose
  // product overflows.
  void validate() const;

  // general.name, e.g. "brick-synthetic-2x256-q4_k_m-s42".
  std::string name() const;
  // Weight values in the file (before quantization).
  std::uint64_t parameters() const noexcept;
};

// A SentencePiece-style vocabulary: <unk>, <s>, </s>, the byte tokens <0x00>..<0xFF>, pieces made
// by joining pieces (scores falling with their rank, "▁" only at the start of a piece), and the
// single characters last. Every piece is unique; the same for a seed.
struct SyntheticVocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<std::int32_t> types;  // llama.cpp's token types (see vocab.hpp)
};
SyntheticVocab synthetic_vocab(std::size_t n_vocab, std::uint64_t seed);

// The writer of the model `spec` describes: its metadata and its tensors, in llama.cpp's names.
gguf::GgufWriter synthetic_model_writer(const SyntheticModelSpec& spec);

// Draws every tensor (rows in parallel over `pool`) and writes the file atomically.
void write_synthetic_model(const SyntheticModelSpec& spec, const std::filesystem::path& path,
                           ThreadPool& pool, const gguf::GgufWriter::Progress& progress = {});

}  // namespace brick::model
