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

// out[r] = row r . x for `rows` rows of `blocks` weight blocks each, laid end to end from `w`;
// the same bits as the single-row kernel of the same instruction set, several rows at a time.
void dot_q5k_q8k_rows_avx512(const BlockQ5K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                             float* out) noexcept;
void dot_q5k_q8k_rows_avx512vnni(const BlockQ5K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                                 float* out) noexcept;
void dot_q5k_q8k_rows_avx512gfni(const BlockQ5K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                                 float* out) noexcept;
void dot_q6k_q8k_rows_avx512(const BlockQ6K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                             float* out) noexcept;
void dot_q6k_q8k_rows_avx512vnni(const BlockQ6K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                                 float* out) noexcept;
void dot_q6k_q8k_rows_avx512gfni(const BlockQ6K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                                 float* out) noexcept;

// out[r][i] = (starts[r] + i * blocks) . x for i < count: four runs of rows anywhere in memory, the
// same bits as the single-row kernel.
void dot_q5k_q8k_four_runs_avx512(const BlockQ5K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                  std::size_t blocks, float* const (&out)[4]) noexcept;
void dot_q5k_q8k_four_runs_avx512vnni(const BlockQ5K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                      std::size_t blocks, float* const (&out)[4]) noexcept;
void dot_q5k_q8k_four_runs_avx512gfni(const BlockQ5K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                      std::size_t blocks, float* const (&out)[4]) noexcept;
void dot_q6k_q8k_four_runs_avx512(const BlockQ6K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                  std::size_t blocks, float* const (&out)[4]) noexcept;
void dot_q6k_q8k_four_runs_avx512vnni(const BlockQ6K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                      std::size_t blocks, float* const (&out)[4]) noexcept;
void dot_q6k_q8k_four_runs_avx512gfni(const BlockQ6K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                      std::size_t blocks, float* const (&out)[4]) noexcept;

}  // namespace brick::quant::kernels
