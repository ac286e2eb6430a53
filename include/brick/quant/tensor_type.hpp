#pragma once
// The element types a tensor of a GGUF file can have, numbered as ggml numbers them (enum ggml_type,
// checked against ggml 0.23.0's ggml_type_name / ggml_blck_size / ggml_type_size). Every type is
// stored in blocks: `block_values` consecutive values of a row take `block_bytes` bytes. Brick reads
// and writes files with any of these types; which ones it can compute with is the business of the
// kernels (is_computable).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace brick::quant {

enum class TensorType : std::uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ2_XXS = 16,
  IQ2_XS = 17,
  IQ3_XXS = 18,
  IQ1_S = 19,
  IQ4_NL = 20,
  IQ3_S = 21,
  IQ2_S = 22,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  IQ1_M = 29,
  BF16 = 30,
  TQ1_0 = 34,
  TQ2_0 = 35,
  MXFP4 = 39,
  NVFP4 = 40,
  Q1_0 = 41,
  Q2_0 = 42,
};

struct TensorTypeTraits {
  TensorType type;
  std::string_view name;     // ggml's name: "f32", "q4_K", ...
  std::size_t block_values;  // values per block
  std::size_t block_bytes;   // bytes per block
};

// The traits of ggml type id `id`, or nothing for an id ggml does not define (or has removed).
std::optional<TensorTypeTraits> tensor_type_traits(std::uint32_t id) noexcept;

// The traits of a defined type.
const TensorTypeTraits& traits(TensorType type) noexcept;

inline std::string_view name(TensorType type) noexcept { return traits(type).name; }

// The type whose ggml name is `name` (case-insensitive: "Q4_K", "q4_k" and "q4_K" all match).
std::optional<TensorType> parse_tensor_type(std::string_view name) noexcept;

// Bytes of a row of `values` values, or nothing when `values` is not a whole number of blocks or
// the byte count does not fit in size_t.
std::optional<std::size_t> row_bytes(TensorType type, std::size_t values) noexcept;

// Whether Brick has quantize/dequantize and dot/mat-vec kernels for this type as a weight matrix.
bool is_computable(TensorType type) noexcept;

}  // namespace brick::quant
