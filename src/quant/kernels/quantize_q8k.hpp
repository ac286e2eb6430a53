#pragma once
// The per-ISA Q8_K quantizers: `blocks` blocks of 256 floats from x into out, the same bytes as the
// scalar reference in q8k.cpp (ggml's quantize_row_q8_K) for every input, non-finite ones included.
// Only quantize_q8k in q8k.cpp, which checks the CPU first, may call them.
#include <cstddef>

#include "brick/quant/kquants.hpp"

namespace brick::quant::kernels {

void quantize_q8k_avx2(const float* x, BlockQ8K* out, std::size_t blocks) noexcept;
void quantize_q8k_avx512(const float* x, BlockQ8K* out, std::size_t blocks) noexcept;

}  // namespace brick::quant::kernels
