#pragma once
// The per-ISA Q5_K·Q8_K and Q6_K·Q8_K dot kernels. Each takes `blocks` weight blocks and as many
// activation blocks and returns the dot product of the 256*blocks values. Defined in their own
// translation units (dot_q5k_q8k_<isa>.cpp, dot_q6k_q8k_<isa>.cpp); only the dispatch in dot.cpp,
// which checks the CPU first, may call the non-scalar ones.
#include <cstddef>

#include "brick/quant/kquants.hpp"

namespace brick::quant::kernels {

float dot_q5k_q8k_scalar(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q5k_q8k_avx2(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q5k_q8k_avx512(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q5k_q8k_avx512vnni(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q5k_q8k_avx512gfni(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept;

float dot_q6k_q8k_scalar(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q6k_q8k_avx2(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q6k_q8k_avx512(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q6k_q8k_avx512vnni(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
float dot_q6k_q8k_avx512gfni(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept;

}  // namespace brick::quant::kernels
