#pragma once
// Every dot kernel, one line each, and their declarations. Adding a kernel is a line here plus its
// file; the table (quant/dot_kernel_table.hpp) that dispatch, tests and benchmarks iterate is built
// from this list.
//
// X(format, stem, Isa, isa, shape, batch): the kernels dot_<stem>_<isa>... of detail::<format>Format
// for the instruction set Isa::<Isa>, defined in dot_<stem>_<isa>.cpp (compiled with that file
// name's flags, see cmake/BrickKernels.cmake). `shape` says which kernels the file defines:
//   Row       dot_<stem>_<isa> only: the rows and four-runs kernels run it row after row
//   Rows      also dot_<stem>_rows_<isa> (several rows at once); a four-runs call is four rows calls
//   Lockstep  also dot_<stem>_four_runs_<isa> (four runs of rows anywhere, walked side by side)
//   Gemm      also gemm_<stem>_<isa> (rows x tokens, each weight block unpacked once for several
//             tokens); without it the GEMM runs the rows kernel once per token on a cache tile of rows
//   RowLockstepGemm  dot_<stem>_<isa>, dot_<stem>_four_runs_<isa> and gemm_<stem>_<isa>; the rows
//             kernel runs the row kernel row after row or the four-runs kernel on four runs of the
//             rows, as the CPU's vendor prefers (quant/row_walk.hpp)
//   RowsGemm  dot_<stem>_<isa>, dot_<stem>_rows_<isa> and gemm_<stem>_<isa>
//   OpsF32    the ops room's f32 kernels ops::kernels::dot_f32_<isa> and matvec_f32_<isa>
// `batch` is the smallest number of tokens the GEMM kernel computes faster than the rows kernel
// once per token (bench/gemm_bench.cpp, small batches); smaller batches run the rows kernel. It is
// 1 for a file without a GEMM kernel. The lane GEMMs cost the same for any batch up to their tile
// of tokens (16 for VNNI, 8 below it).
// Within a format the lines of one backend go from the least to the most preferred instruction set:
// a backend runs the last line of its own that the CPU supports. The repacked formats' AVX-512
// lines are their AVX2 kernels built for AVX-512: there the AVX-512 backend prefers plain blocks
// (preferred_layout()), and runs repacked ones a caller made. Grouped Q8_0's AVX-512 VNNI line is
// the plain AVX-512 VNNI kernels on grouped blocks, which it prefers.
#include <cstddef>

#include "ops/kernels/f32_kernels.hpp"
#include "quant/kernels/dot_formats.hpp"

#define BRICK_QUANT_DOT_KERNELS(X)                                             \
  X(F32, f32, Scalar, scalar, OpsF32, 1)                                       \
  X(F32, f32, Avx2, avx2, OpsF32, 1)                                           \
  X(F32, f32, Avx512, avx512, OpsF32, 1)                                       \
  X(F16, f16_f16, Scalar, scalar, Row, 1)                                      \
  X(F16, f16_f16, Avx2, avx2, Row, 1)                                          \
  X(F16, f16_f16, Avx512, avx512, Lockstep, 1)                                 \
  X(BF16, bf16_bf16, Scalar, scalar, Row, 1)                                   \
  X(BF16, bf16_bf16, Avx2, avx2, Row, 1)                                       \
  X(BF16, bf16_bf16, Avx512, avx512, Lockstep, 1)                              \
  X(BF16, bf16_bf16, Avx512Bf16, avx512bf16, Lockstep, 1)                      \
  X(Q80, q8_0_q8_0, Scalar, scalar, Row, 1)                                    \
  X(Q80, q8_0_q8_0, Avx2, avx2, RowsGemm, 8)                                   \
  X(Q80, q8_0_q8_0, AvxVnni, avxvnni, Gemm, 4)                                 \
  X(Q80, q8_0_q8_0, Avx512, avx512, Lockstep, 1)                               \
  X(Q80, q8_0_q8_0, Avx512Vnni, avx512vnni, Gemm, 5)                           \
  X(Q4K, q4k_q8k, Scalar, scalar, Row, 1)                                      \
  X(Q4K, q4k_q8k, Avx2, avx2, RowLockstepGemm, 4)                              \
  X(Q4K, q4k_q8k, AvxVnni, avxvnni, RowLockstepGemm, 4)                        \
  X(Q4K, q4k_q8k, Avx512, avx512, Gemm, 5)                                     \
  X(Q4K, q4k_q8k, Avx512Vnni, avx512vnni, Gemm, 10)                            \
  X(Q5K, q5k_q8k, Scalar, scalar, Row, 1)                                      \
  X(Q5K, q5k_q8k, Avx2, avx2, RowLockstepGemm, 4)                              \
  X(Q5K, q5k_q8k, AvxVnni, avxvnni, RowLockstepGemm, 4)                        \
  X(Q5K, q5k_q8k, Avx512, avx512, Gemm, 5)                                     \
  X(Q5K, q5k_q8k, Avx512Vnni, avx512vnni, Gemm, 10)                            \
  X(Q5K, q5k_q8k, Avx512Gfni, avx512gfni, Gemm, 10)                            \
  X(Q6K, q6k_q8k, Scalar, scalar, Row, 1)                                      \
  X(Q6K, q6k_q8k, Avx2, avx2, RowLockstepGemm, 4)                              \
  X(Q6K, q6k_q8k, AvxVnni, avxvnni, RowLockstepGemm, 4)                        \
  X(Q6K, q6k_q8k, Avx512, avx512, Gemm, 5)                                     \
  X(Q6K, q6k_q8k, Avx512Vnni, avx512vnni, Gemm, 10)                            \
  X(Q6K, q6k_q8k, Avx512Gfni, avx512gfni, Gemm, 10)                            \
  X(Q80Grouped, q8_0_grouped_q8_0, Scalar, scalar, Row, 1)                     \
  X(Q80Grouped, q8_0_grouped_q8_0, Avx2, avx2, RowsGemm, 12)                   \
  X(Q80Grouped, q8_0_grouped_q8_0, AvxVnni, avxvnni, RowsGemm, 4)              \
  X(Q80Grouped, q8_0_grouped_q8_0, Avx512, avx512, RowsGemm, 12)               \
  X(Q80Grouped, q8_0_grouped_q8_0, Avx512Vnni, avx512vnni, Gemm, 5)            \
  X(Q4KInterleaved, q4k_interleaved_q8k, Scalar, scalar, Row, 1)               \
  X(Q4KInterleaved, q4k_interleaved_q8k, Avx2, avx2, RowLockstepGemm, 4)       \
  X(Q4KInterleaved, q4k_interleaved_q8k, AvxVnni, avxvnni, RowLockstepGemm, 4) \
  X(Q4KInterleaved, q4k_interleaved_q8k, Avx512, avx512, RowLockstepGemm, 4)   \
  X(Q5KInterleaved, q5k_interleaved_q8k, Scalar, scalar, Row, 1)               \
  X(Q5KInterleaved, q5k_interleaved_q8k, Avx2, avx2, RowLockstepGemm, 4)       \
  X(Q5KInterleaved, q5k_interleaved_q8k, AvxVnni, avxvnni, RowLockstepGemm, 4) \
  X(Q5KInterleaved, q5k_interleaved_q8k, Avx512, avx512, RowLockstepGemm, 4)   \
  X(Q6KInterleaved, q6k_interleaved_q8k, Scalar, scalar, Row, 1)               \
  X(Q6KInterleaved, q6k_interleaved_q8k, Avx2, avx2, RowLockstepGemm, 4)       \
  X(Q6KInterleaved, q6k_interleaved_q8k, AvxVnni, avxvnni, RowLockstepGemm, 4) \
  X(Q6KInterleaved, q6k_interleaved_q8k, Avx512, avx512, RowLockstepGemm, 4)

namespace brick::quant::kernels {

#define BRICK_DOT_DECLARE_Row(F, stem, isa)                                                               \
  float dot_##stem##_##isa(const detail::F##Format::Weight* w, const detail::F##Format::Activation* x, \
                           std::size_t blocks) noexcept;
#define BRICK_DOT_DECLARE_Rows(F, stem, isa)                                                              \
  BRICK_DOT_DECLARE_Row(F, stem, isa) void dot_##stem##_rows_##isa(                                      \
      const detail::F##Format::Weight* w, std::size_t rows, const detail::F##Format::Activation* x,     \
      std::size_t blocks, float* out) noexcept;
#define BRICK_DOT_DECLARE_Lockstep(F, stem, isa)                                                          \
  BRICK_DOT_DECLARE_Rows(F, stem, isa) void dot_##stem##_four_runs_##isa(                                \
      const detail::F##Format::Weight* const(&starts)[4], std::size_t count,                             \
      const detail::F##Format::Activation* x, std::size_t blocks, float* const(&out)[4]) noexcept;
#define BRICK_DOT_DECLARE_Gemm(F, stem, isa)                                                              \
  BRICK_DOT_DECLARE_Lockstep(F, stem, isa) void gemm_##stem##_##isa(                                     \
      const detail::F##Format::Weight* w, std::size_t rows, const detail::F##Format::Activation* x,     \
      std::size_t tokens, std::size_t blocks, float* out, std::size_t out_stride) noexcept;
#define BRICK_DOT_DECLARE_RowLockstepGemm(F, stem, isa)                                                                \
  BRICK_DOT_DECLARE_Row(F, stem, isa) void dot_##stem##_four_runs_##isa(                                               \
      const detail::F##Format::Weight* const(&starts)[4], std::size_t count, const detail::F##Format::Activation* x,   \
      std::size_t blocks, float* const(&out)[4]) noexcept;                                                             \
  void gemm_##stem##_##isa(const detail::F##Format::Weight* w, std::size_t rows,                                       \
                           const detail::F##Format::Activation* x, std::size_t tokens, std::size_t blocks, float* out, \
                           std::size_t out_stride) noexcept;
#define BRICK_DOT_DECLARE_RowsGemm(F, stem, isa)                                                          \
  BRICK_DOT_DECLARE_Rows(F, stem, isa) void gemm_##stem##_##isa(                                         \
      const detail::F##Format::Weight* w, std::size_t rows, const detail::F##Format::Activation* x,     \
      std::size_t tokens, std::size_t blocks, float* out, std::size_t out_stride) noexcept;
#define BRICK_DOT_DECLARE_OpsF32(F, stem, isa)
#define BRICK_DOT_DECLARE(F, stem, I, isa, shape, batch) BRICK_DOT_DECLARE_##shape(F, stem, isa)

BRICK_QUANT_DOT_KERNELS(BRICK_DOT_DECLARE)

#undef BRICK_DOT_DECLARE
#undef BRICK_DOT_DECLARE_OpsF32
#undef BRICK_DOT_DECLARE_Gemm
#undef BRICK_DOT_DECLARE_RowLockstepGemm
#undef BRICK_DOT_DECLARE_RowsGemm
#undef BRICK_DOT_DECLARE_Lockstep
#undef BRICK_DOT_DECLARE_Rows
#undef BRICK_DOT_DECLARE_Row

}  // namespace brick::quant::kernels
