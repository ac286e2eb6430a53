#pragma once
// Rows of f32 values into any type Brick writes, with the bytes ggml_quantize_chunk writes for it
// without an importance matrix (what llama-quantize puts in a model file): Q4_K, Q5_K, Q6_K and
// Q8_0 through their reference quantizers, F16 and BF16 rounded to nearest even (F16 turning every
// NaN into 0x7E00 of its sign, as ggml_fp32_to_fp16_row does), F32 copied. Every type Brick
// computes with (is_computable) is quantizable.
#include <cstddef>
#include <span>

#include "brick/quant/tensor_type.hpp"

namespace brick::quant {

// Whether quantize() writes this type.
bool is_quantizable(TensorType type) noexcept;

// `values` holds whole rows of `n_per_row` values; `out` exactly their bytes in `type`
// (row_bytes(type, n_per_row) per row). Throws InvalidArgument for a type quantize() does not
// write, n_per_row 0 or not a whole number of the type's blocks, or mismatched sizes.
void quantize(TensorType type, std::span<const float> values, std::size_t n_per_row, std::span<std::byte> out);

// The inverse for every computable type: `out` holds `in`'s values as floats.
void dequantize(TensorType type, std::span<const std::byte> in, std::span<float> out);

}  // namespace brick::quant
