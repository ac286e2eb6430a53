#pragma once
// The per-ISA Q8_0 activation quantizers: `blocks` blocks of 32 floats from x into out, the same
// bytes as the scalar reference in q8_0.cpp (ggml-cpu's x86 quantize_row_q8_0) for every input,
// non-finite ones included. Only quantize_q8_0_activation, which checks the CPU first, may call them.
#include <cstddef>

#include "brick/quant/q8_0.hpp"

namespace brick::quant::kernels {

void quantize_q8_0_activation_avx2(const float* x, BlockQ80* out, std::size_t blocks) noexcept;
void quantize_q8_0_activation_avx512(const float* x, BlockQ80* out, std::size_t blocks) noexcept;

}  // namespace brick::quant::kernels
