#pragma once
// The per-ISA fp32 -> bf16 row conversions: the bits of brick::quant::fp32_to_bf16 (ggml's rounding,
// NaNs kept quiet) for every float. Only fp32_to_bf16_row, which checks the CPU first, may call them.
#include <cstddef>
#include <cstdint>

namespace brick::quant::kernels {

void fp32_to_bf16_avx2(const float* in, std::uint16_t* out, std::size_t n) noexcept;
void fp32_to_bf16_avx512(const float* in, std::uint16_t* out, std::size_t n) noexcept;

}  // namespace brick::quant::kernels
