#pragma once
// The row loop shared by matvec and the fused projections: several weight matrices that read the
// same activation are laid end to end as one range of rows, so a single balance211 split over the
// pool covers all of them in one parallel pass. Each matrix reads x in its own type's activation
// format; Activations holds every format the matrices of one call need, converted once.
#include <cstddef>
#include <span>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/quant/weight_matrix.hpp"
#include "brick/runtime/batch/balance211.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "quant/kernels/dot_formats.hpp"

namespace brick::quant::detail {

// Quantizing x: per value an absolute value, a compare, a multiply and a round; plus one store.
inline constexpr double kQuantizeFlopsPerValue = 4.0;

// Throws InvalidArgument naming `op` unless `tokens` >= 1 rows of `cols` inputs and of `rows`
// outputs fill x and out exactly (the batch form of the projections).
void require_batch(std::string_view op, std::size_t tokens, std::size_t cols, std::size_t x, std::size_t rows,
                   std::size_t out);

// One activation vector of `cols` values in each format some matrix needs (unset ones null).
struct Activations {
  std::size_t cols = 0;
  const void* data[kActivationTypes] = {};

  void set(ActivationType type, const void* values) noexcept { data[static_cast<std::size_t>(type)] = values; }
  template <class Format>
  const typename Format::Activation* get() const noexcept {
    return static_cast<const typename Format::Activation*>(data[static_cast<std::size_t>(Format::kActivation)]);
  }
};

// The rows of one matrix with the kernel picked for it.
struct RowSource {
  TensorType type = TensorType::F32;
  ActivationType activation = ActivationType::F32;
  const std::byte* data = nullptr;
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  std::size_t blocks = 0;  // blocks per row
  const void* kernel = nullptr;  // the DotKernel<Format> of the table picked for this matrix
  std::string_view kernel_name = {};  // its name in the table ("dot_q4k_q8k_avx2")
  // The kernel's rows and four-runs shapes called through their format's types (all four sources of
  // a four-runs call have this source's kernel).
  void (*rows_call)(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
                    float* out) noexcept = nullptr;
  void (*four_runs_call)(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                         const Activations& x, float* const (&out)[4]) noexcept = nullptr;
  std::string_view gemm_name = {};  // its GEMM's name in the table ("gemm_q4k_q8k_avx512vnni")
  std::size_t gemm_batch = 1;        // the smallest batch its GEMM kernel runs for (run_gemm())
  // The GEMM: out[t * out_stride + i] = row (first + i) . token t of x, for i < count, t < tokens;
  // below gemm_batch tokens the rows kernel once per token.
  void (*tokens_call)(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
                      std::size_t tokens, float* out, std::size_t out_stride) noexcept = nullptr;

  const std::byte* row(std::size_t r) const noexcept { return data + r * row_bytes; }
};

// Throws InvalidArgument when Brick has no kernels for w's type, and as resolve() does.
RowSource row_source(const WeightMatrix& w, Backend backend);

// The name of one parallel pass over `sources` (as KernelScope reports it): their kernel's name
// when they share one, else "dot_rows_mixed" (a model file mixes weight types within a block).
std::string_view pass_name(std::span<const RowSource> sources) noexcept;

// The bytes one pass over `sources` for `tokens` tokens reads and writes: every weight row once,
// each token's x in each format once, one float out per row and token.
double pass_bytes(std::span<const RowSource> sources, std::size_t cols, std::size_t tokens = 1) noexcept;

// x converted, by `backend`'s kernels, into every format `sources` need, in the calling thread's
// scratch buffers (valid until the thread's next call). x may hold several tokens end to end: they
// are converted together and lie end to end in each format.
Activations prepare_activations(std::span<const RowSource> sources, std::span<const float> x, Backend backend);

// out[i] = row (first + i) of `source` (local row indices) . x for i < count.
inline void dot_source_rows(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
                            float* out) noexcept {
  source.rows_call(source, first, count, x, out);
}

// out[i][j] = row firsts[i] + j of sources[i] . x for j < count: four runs of rows (local row
// indices), walked side by side when the four have the same kernel.
void dot_four_source_runs(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                          const Activations& x, float* const (&out)[4]) noexcept;

// The GEMM of a batch: out[t * out_stride + r] = row r . token t of x for the global rows
// [range.begin, range.end) of `sources` laid end to end and the `tokens` tokens of x (each
// activation format holding the tokens end to end): one GEMM kernel call per source.
void dot_rows_tokens(std::span<const RowSource> sources, const Activations& x, std::size_t tokens, Range range,
                     float* out, std::size_t out_stride) noexcept;

// The name of one GEMM pass over `sources` for `tokens` tokens, as pass_name() names a mat-vec pass:
// the GEMM kernel's, or the dot kernel's for a batch its rows kernel computes ("gemm_rows_mixed").
std::string_view gemm_pass_name(std::span<const RowSource> sources, std::size_t tokens) noexcept;

// out (`tokens` rows of the rows of `sources` laid end to end) = those rows times each row of x
// (`tokens` rows of cols values): x converted once for the batch, then one parallel GEMM pass over
// the pool, reported to the recorder as one kernel.
void gemm(std::span<const RowSource> sources, std::span<const float> x, std::size_t tokens, std::span<float> out,
          ThreadPool& pool, Backend backend);

// out[r] = row r . x for the global rows [range.begin, range.end) of `sources` laid end to end.
// `out` holds one float per global row.
void dot_rows(std::span<const RowSource> sources, const Activations& x, Range range, std::span<float> out) noexcept;

}  // namespace brick::quant::detail
