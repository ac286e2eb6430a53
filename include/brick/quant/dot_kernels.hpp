#pragma once
// The instruction-set variants of the k-quant dot kernels, for callers that run many dots (matvec,
// fused ops) and pick the function once, and for tests and benchmarks that compare every variant.
// A Backend maps to one variant: Avx512 runs the best of Avx512Gfni (AVX-512 VNNI + GFNI),
// Avx512Vnni and Avx512 (F/BW) that the CPU has.
#include <array>
#include <cstddef>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/core/cpu_features.hpp"
#include "brick/quant/kquants.hpp"

namespace brick::quant {

enum class DotIsa : unsigned char { Scalar, Avx2, Avx512, Avx512Vnni, Avx512Gfni };

inline constexpr std::array<DotIsa, 5> kDotIsas = {DotIsa::Scalar, DotIsa::Avx2, DotIsa::Avx512,
                                                   DotIsa::Avx512Vnni, DotIsa::Avx512Gfni};

std::string_view name(DotIsa isa) noexcept;

bool is_supported(DotIsa isa, const CpuFeatures& features = cpu_features()) noexcept;

// The variant `backend` runs here (Auto resolved as by brick::resolve, which may throw).
DotIsa dot_isa(Backend backend);

// Kernels over `blocks` weight blocks and as many Q8_K blocks; no validation, no allocation.
using DotQ5KKernel = float (*)(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept;
using DotQ6KKernel = float (*)(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept;

// out[r] = row r . x for `rows` rows of `blocks` weight blocks each, laid end to end from `w`:
// the same bits as the single-row kernel of the same variant on each row. The AVX-512 variants
// walk several rows in lockstep, which keeps more weight reads in flight from DRAM.
using DotQ5KRowsKernel = void (*)(const BlockQ5K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                                  float* out) noexcept;
using DotQ6KRowsKernel = void (*)(const BlockQ6K* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                                  float* out) noexcept;

// out[r][i] = (starts[r] + i * blocks) . x for i < count: four runs of `count` consecutive rows of
// `blocks` weight blocks each, wherever each run starts (rows of two matrices, say); the same bits
// as the single-row kernel of the same variant on each row. The AVX-512 variants walk the four runs
// side by side and load each activation block once for the four rows of a step.
using DotQ5KFourRunsKernel = void (*)(const BlockQ5K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                      std::size_t blocks, float* const (&out)[4]) noexcept;
using DotQ6KFourRunsKernel = void (*)(const BlockQ6K* const (&starts)[4], std::size_t count, const BlockQ8K* x,
                                      std::size_t blocks, float* const (&out)[4]) noexcept;

// Throw BackendUnavailable when this CPU cannot run `isa`.
DotQ5KKernel dot_q5k_q8k_kernel(DotIsa isa);
DotQ6KKernel dot_q6k_q8k_kernel(DotIsa isa);
DotQ5KRowsKernel dot_q5k_q8k_rows_kernel(DotIsa isa);
DotQ6KRowsKernel dot_q6k_q8k_rows_kernel(DotIsa isa);
DotQ5KFourRunsKernel dot_q5k_q8k_four_runs_kernel(DotIsa isa);
DotQ6KFourRunsKernel dot_q6k_q8k_four_runs_kernel(DotIsa isa);

}  // namespace brick::quant
