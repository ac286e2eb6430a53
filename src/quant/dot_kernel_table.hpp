#pragma once
// The dot kernel table: per weight format (kernels/dot_formats.hpp), every kernel of the list in
// kernels/dot_kernel_list.hpp with its instruction set, names and four shapes, and how a backend
// picks one. Dispatch (matvec, the fused ops, the public dot functions), the tests and the
// benchmarks all go through it; it is private to the library and its own tests and benchmarks.
#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "brick/core/backend.hpp"
#include "brick/core/cpu_features.hpp"
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/lockstep.hpp"
#include "quant/row_walk.hpp"

namespace brick::quant::detail {

// Every weight format Brick computes with; is_computable() is true for exactly their types.
using DotFormats = std::tuple<F32Format, F16Format, BF16Format, Q80Format, Q4KFormat, Q5KFormat, Q6KFormat,
                              Q80GroupedFormat, Q4KInterleavedFormat, Q5KInterleavedFormat, Q6KInterleavedFormat>;

// The instruction sets kernels are built for. Each belongs to one backend and needs that backend's
// features plus its own.
enum class Isa : unsigned char { Scalar, Avx2, AvxVnni, Avx512, Avx512Vnni, Avx512Gfni, Avx512Bf16 };

inline constexpr std::array<Isa, 7> kIsas = {Isa::Scalar,     Isa::Avx2,       Isa::AvxVnni,   Isa::Avx512,
                                             Isa::Avx512Vnni, Isa::Avx512Gfni, Isa::Avx512Bf16};

std::string_view name(Isa isa) noexcept;
Backend backend_of(Isa isa) noexcept;
// The CPU feature `isa` needs that `features` lacks, or nothing when it runs there.
std::optional<std::string_view> missing_feature(Isa isa, const CpuFeatures& features = cpu_features()) noexcept;
inline bool is_supported(Isa isa, const CpuFeatures& features = cpu_features()) noexcept {
  return !missing_feature(isa, features);
}

template <class Format>
struct DotKernel {
  Isa isa = Isa::Scalar;
  std::string_view name;  // "dot_q5k_q8k_avx512gfni"
  typename Format::Row row = nullptr;
  typename Format::Rows rows = nullptr;
  typename Format::FourRuns four_runs = nullptr;
  std::string_view gemm_name;  // "gemm_q5k_q8k_avx512gfni"
  typename Format::Tokens tokens = nullptr;
  std::size_t gemm_batch = 1;  // the list's `batch`: see run_gemm()
};

// The rows kernel of a format whose kernel file has only a single-row kernel.
template <class Format, auto kRow>
void each_row(const typename Format::Weight* w, std::size_t rows, const typename Format::Activation* x,
              std::size_t blocks, float* out) noexcept {
  for (std::size_t r = 0; r < rows; ++r) out[r] = kRow(w + r * blocks, x, blocks);
}

// The rows kernel of a RowLockstepGemm file: four runs of the rows by the four-runs kernel (then
// the rows past them one at a time) where walks_in_four_runs() says so (unpinned, never for rows
// under kFourRunsMinBytes), else one row after another.
template <class Format, auto kRow, auto kFourRuns>
void rows_by_walk(const typename Format::Weight* w, std::size_t rows, const typename Format::Activation* x,
                  std::size_t blocks, float* out) noexcept {
  if (!walks_in_four_runs(rows * blocks * sizeof(typename Format::Weight), RowWalk::OneAfterAnother)) {
    each_row<Format, kRow>(w, rows, x, blocks, out);
    return;
  }
  in_four_runs(
      w, rows, blocks, out,
      [&](const typename Format::Weight* const(&starts)[4], std::size_t run, float* const(&outs)[4]) {
        kFourRuns(starts, run, x, blocks, outs);
      },
      [&](const typename Format::Weight* row) { return kRow(row, x, blocks); });
}

// The four-runs kernel of a format whose kernel file has a rows kernel but no lockstep kernel.
template <class Format, auto kRows>
void four_rows_calls(const typename Format::Weight* const (&starts)[4], std::size_t count,
                     const typename Format::Activation* x, std::size_t blocks, float* const (&out)[4]) noexcept {
  for (std::size_t r = 0; r < 4; ++r) kRows(starts[r], count, x, blocks, out[r]);
}

// The GEMM of a format whose kernel file has none: the rows kernel once per token, on cache tiles
// of about kGemmTileBytes of rows, each read from memory once for all the tokens.
inline constexpr std::size_t kGemmTileBytes = 256 * 1024;

template <class Format>
void rows_once_per_token(typename Format::Rows rows_kernel, const typename Format::Weight* w, std::size_t rows,
                         const typename Format::Activation* x, std::size_t tokens, std::size_t blocks, float* out,
                         std::size_t out_stride) noexcept {
  const std::size_t tile = std::max<std::size_t>(1, kGemmTileBytes / (blocks * sizeof(typename Format::Weight)));
  for (std::size_t first = 0; first < rows; first += tile) {
    const std::size_t count = std::min(tile, rows - first);
    for (std::size_t t = 0; t < tokens; ++t) {
      rows_kernel(w + first * blocks, count, x + t * blocks, blocks, out + t * out_stride + first);
    }
  }
}

template <class Format, auto kRows>
void each_token(const typename Format::Weight* w, std::size_t rows, const typename Format::Activation* x,
                std::size_t tokens, std::size_t blocks, float* out, std::size_t out_stride) noexcept {
  rows_once_per_token<Format>(kRows, w, rows, x, tokens, blocks, out, out_stride);
}

// The ops room's f32 mat-vec as a rows kernel.
template <auto kMatvec>
void f32_rows(const float* w, std::size_t rows, const float* x, std::size_t cols, float* out) noexcept {
  kMatvec(w, rows, cols, x, out);
}

#define BRICK_DOT_ENTRY_Row(F, stem, I, isa, batch)                                                         \
  DotKernel<F##Format> {                                                                                    \
    Isa::I, "dot_" #stem "_" #isa, &kernels::dot_##stem##_##isa,                                            \
        &each_row<F##Format, &kernels::dot_##stem##_##isa>,                                                 \
        &four_rows_calls<F##Format, &each_row<F##Format, &kernels::dot_##stem##_##isa>>,                    \
        "gemm_" #stem "_" #isa, &each_token<F##Format, &each_row<F##Format, &kernels::dot_##stem##_##isa>>, \
        batch                                                                                               \
  }
#define BRICK_DOT_ENTRY_Rows(F, stem, I, isa, batch)                                                        \
  DotKernel<F##Format> {                                                                                    \
    Isa::I, "dot_" #stem "_" #isa, &kernels::dot_##stem##_##isa, &kernels::dot_##stem##_rows_##isa,         \
        &four_rows_calls<F##Format, &kernels::dot_##stem##_rows_##isa>, "gemm_" #stem "_" #isa,             \
        &each_token<F##Format, &kernels::dot_##stem##_rows_##isa>, batch                                    \
  }
#define BRICK_DOT_ENTRY_Lockstep(F, stem, I, isa, batch)                                                    \
  DotKernel<F##Format> {                                                                                    \
    Isa::I, "dot_" #stem "_" #isa, &kernels::dot_##stem##_##isa, &kernels::dot_##stem##_rows_##isa,         \
        &kernels::dot_##stem##_four_runs_##isa, "gemm_" #stem "_" #isa,                                     \
        &each_token<F##Format, &kernels::dot_##stem##_rows_##isa>, batch                                    \
  }
#define BRICK_DOT_ENTRY_Gemm(F, stem, I, isa, batch)                                                        \
  DotKernel<F##Format> {                                                                                    \
    Isa::I, "dot_" #stem "_" #isa, &kernels::dot_##stem##_##isa, &kernels::dot_##stem##_rows_##isa,         \
        &kernels::dot_##stem##_four_runs_##isa, "gemm_" #stem "_" #isa, &kernels::gemm_##stem##_##isa,      \
        batch                                                                                               \
  }
#define BRICK_DOT_ENTRY_RowLockstepGemm(F, stem, I, isa, batch)                                              \
  DotKernel<F##Format> {                                                                                     \
    Isa::I, "dot_" #stem "_" #isa, &kernels::dot_##stem##_##isa,                                             \
        &rows_by_walk<F##Format, &kernels::dot_##stem##_##isa, &kernels::dot_##stem##_four_runs_##isa>,      \
        &kernels::dot_##stem##_four_runs_##isa, "gemm_" #stem "_" #isa, &kernels::gemm_##stem##_##isa, batch \
  }
#define BRICK_DOT_ENTRY_RowsGemm(F, stem, I, isa, batch)                                                    \
  DotKernel<F##Format> {                                                                                    \
    Isa::I, "dot_" #stem "_" #isa, &kernels::dot_##stem##_##isa, &kernels::dot_##stem##_rows_##isa,         \
        &four_rows_calls<F##Format, &kernels::dot_##stem##_rows_##isa>, "gemm_" #stem "_" #isa,             \
        &kernels::gemm_##stem##_##isa, batch                                                                \
  }
#define BRICK_DOT_ENTRY_OpsF32(F, stem, I, isa, batch)                                                      \
  DotKernel<F##Format> {                                                                                    \
    Isa::I, "dot_f32_" #isa, &ops::kernels::dot_f32_##isa, &f32_rows<&ops::kernels::matvec_f32_##isa>,      \
        &four_rows_calls<F##Format, &f32_rows<&ops::kernels::matvec_f32_##isa>>, "gemm_f32_" #isa,          \
        &each_token<F##Format, &f32_rows<&ops::kernels::matvec_f32_##isa>>, batch                           \
  }

template <class Format>
constexpr std::size_t count_kernels() {
  std::size_t count = 0;
#define BRICK_DOT_COUNT(F, stem, I, isa, shape, batch) count += std::is_same_v<Format, F##Format> ? 1 : 0;
  BRICK_QUANT_DOT_KERNELS(BRICK_DOT_COUNT)
#undef BRICK_DOT_COUNT
  return count;
}

template <class Format>
constexpr std::array<DotKernel<Format>, count_kernels<Format>()> make_kernels() {
  std::array<DotKernel<Format>, count_kernels<Format>()> table{};
  std::size_t i = 0;
#define BRICK_DOT_ADD(F, stem, I, isa, shape, batch) \
  if constexpr (std::is_same_v<Format, F##Format>) table[i++] = BRICK_DOT_ENTRY_##shape(F, stem, I, isa, batch);
  BRICK_QUANT_DOT_KERNELS(BRICK_DOT_ADD)
#undef BRICK_DOT_ADD
  return table;
}

#undef BRICK_DOT_ENTRY_OpsF32
#undef BRICK_DOT_ENTRY_Gemm
#undef BRICK_DOT_ENTRY_RowLockstepGemm
#undef BRICK_DOT_ENTRY_RowsGemm
#undef BRICK_DOT_ENTRY_Lockstep
#undef BRICK_DOT_ENTRY_Rows
#undef BRICK_DOT_ENTRY_Row

// Every kernel of one format, in the list's order.
template <class Format>
inline constexpr std::array<DotKernel<Format>, count_kernels<Format>()> kDotKernels = make_kernels<Format>();

template <class Format>
constexpr bool has_kernel(Isa isa) noexcept {
  for (const DotKernel<Format>& kernel : kDotKernels<Format>) {
    if (kernel.isa == isa) return true;
  }
  return false;
}

// The kernel of `Format` for `isa`, or null when the list has none.
template <class Format>
constexpr const DotKernel<Format>* find_kernel(Isa isa) noexcept {
  for (const DotKernel<Format>& kernel : kDotKernels<Format>) {
    if (kernel.isa == isa) return &kernel;
  }
  return nullptr;
}

// The kernel `backend` runs for `Format` on this CPU: the last of the backend's lines that the CPU
// supports. Throws as resolve() does (BackendUnavailable for a backend this CPU cannot run).
template <class Format>
const DotKernel<Format>& select_kernel(Backend backend) {
  const Backend resolved = resolve(backend);
  const DotKernel<Format>* chosen = &kDotKernels<Format>.front();
  for (const DotKernel<Format>& kernel : kDotKernels<Format>) {
    if (backend_of(kernel.isa) == resolved && is_supported(kernel.isa)) chosen = &kernel;
  }
  return *chosen;
}

// True when a GEMM of `tokens` tokens runs a kernel's GEMM kernel: from its batch on. Below it the
// GEMM kernel costs as much as a whole tile of tokens, more than the rows kernel once per token.
constexpr bool runs_gemm_kernel(std::size_t gemm_batch, std::size_t tokens) noexcept { return tokens >= gemm_batch; }

// Y = W X through `kernel`: its GEMM kernel where runs_gemm_kernel(), otherwise its rows kernel once
// per token on cache tiles. Either gives each (row, token) the rows kernel's bits.
template <class Format>
void run_gemm(const DotKernel<Format>& kernel, const typename Format::Weight* w, std::size_t rows,
              const typename Format::Activation* x, std::size_t tokens, std::size_t blocks, float* out,
              std::size_t out_stride) noexcept {
  if (runs_gemm_kernel(kernel.gemm_batch, tokens)) {
    kernel.tokens(w, rows, x, tokens, blocks, out, out_stride);
  } else {
    rows_once_per_token<Format>(kernel.rows, w, rows, x, tokens, blocks, out, out_stride);
  }
}

// Calls visit(Format{}) for the format of weight type `type` in `layout`; false when Brick has none.
template <class Visitor>
bool with_format(TensorType type, WeightLayout layout, Visitor&& visit) {
  return std::apply(
      [&](auto... formats) {
        return ((decltype(formats)::kType == type && decltype(formats)::kLayout == layout ? (visit(formats), true)
                                                                                          : false) ||
                ...);
      },
      DotFormats{});
}
template <class Visitor>
bool with_format(TensorType type, Visitor&& visit) {
  return with_format(type, WeightLayout::Plain, visit);
}

}  // namespace brick::quant::detail
