#pragma once
// A model file's quantization as llama.cpp names it (llama_ftype, stored as general.file_type),
// and the type llama-quantize gives each tensor of a llama model under it: the "_M" mixes keep
// the output (or the tied embedding) in Q6_K and give attn_v and ffn_down Q6_K in the first and
// last eighth of the blocks and every third block between (llama.cpp's use_more_bits).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "brick/quant/tensor_type.hpp"

namespace brick::model {

enum class FileType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q8_0 = 7,
  Q4_K_M = 15,
  Q5_K_M = 17,
  Q6_K = 18,
  BF16 = 32,
};

// "f32", "f16", "q8_0", "q4_k_m", "q5_k_m", "q6_k", "bf16".
std::string_view name(FileType type) noexcept;
// The inverse of name(), case-insensitive.
std::optional<FileType> parse_file_type(std::string_view text) noexcept;
// A FileType Brick writes, from general.file_type.
std::optional<FileType> file_type_from_id(std::uint32_t id) noexcept;

// The tensor type of tensor `name` of a llama model with `n_layer` blocks under `file_type`.
// `has_output`: the model has its own output.weight (else token_embd serves as the output and is
// typed as one). One-dimensional tensors (the norms) stay F32 whatever the file type.
quant::TensorType llama_tensor_type(FileType file_type, std::string_view name, std::size_t n_dims,
                                    std::size_t n_layer, bool has_output);

}  // namespace brick::model
