#pragma once
// Row conversions with F16C (built with -mf16c; call only when the CPU has F16C) and with AVX-512
// (call only when the CPU has AVX-512 F/BW). Bit-identical to the portable conversions in
// brick/quant/fp16.hpp.
#include <cstddef>
#include <cstdint>

namespace brick::quant::kernels {

void fp16_to_fp32_f16c(const std::uint16_t* in, float* out, std::size_t n) noexcept;
void fp32_to_fp16_f16c(const float* in, std::uint16_t* out, std::size_t n) noexcept;
void fp16_to_fp32_avx512(const std::uint16_t* in, float* out, std::size_t n) noexcept;
void fp32_to_fp16_avx512(const float* in, std::uint16_t* out, std::size_t n) noexcept;

}  // namespace brick::quant::kernels
