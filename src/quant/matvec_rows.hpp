#pragma once
// The row loop shared by matvec and the fused projections: several weight matrices that read the
// same activation are laid end to end as one range of rows, so a single balance211 split over the
// pool covers all of them in one parallel pass. Each matrix reads x in its own type's activation
// format; Activations holds every format the matrices of one call need, converted once.
#include <cstddef>
#include <span>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/quant/dot_kernels.hpp"
#include "brick/runtime/batch/balance211.hpp"
#include "brick/quant/weight_matrix.hpp"

namespace brick::quant::detail {

// The activation formats of llama.cpp's CPU mat-vecs, by weight type.
enum class ActivationType : unsigned char { F32, Q8K };

ActivationType activation_type(TensorType weight) noexcept;

// Throws InvalidArgument naming `op` unless `tokens` >= 1 rows of `cols` inputs and of `rows`
// outputs fill x and out exactly (the batch form of the projections).
void require_batch(std::string_view op, std::size_t tokens, std::size_t cols, std::size_t x, std::size_t rows,
                   std::size_t out);

// One activation vector of `cols` values in each format some matrix needs (unset ones null).
struct Activations {
  std::size_t cols = 0;
  const float* f32 = nullptr;
  const BlockQ8K* q8k = nullptr;
};

// The rows of one matrix with the kernels picked for it.
struct RowSource {
  TensorType type = TensorType::F32;
  const std::byte* data = nullptr;
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  std::size_t cols = 0;
  // The type's rows kernel and (for types that have one) four-runs kernel, stored as a generic
  // function pointer and called through its real type by the functions below.
  void (*rows_kernel)() = nullptr;
  void (*four_runs_kernel)() = nullptr;

  const std::byte* row(std::size_t r) const noexcept { return data + r * row_bytes; }
};

RowSource row_source(const WeightMatrix& w, DotIsa isa);

// x converted, by `backend`'s kernels, into every format `sources` need, in the calling thread's
// scratch buffers (valid until the thread's next call).
Activations prepare_activations(std::span<const RowSource> sources, std::span<const float> x, Backend backend);

// out[i] = row (first + i) of `source` (local row indices) . x for i < count.
void dot_source_rows(const RowSource& source, std::size_t first, std::size_t count, const Activations& x,
                     float* out) noexcept;

// out[i][j] = row firsts[i] + j of sources[i] . x for j < count: four runs of rows (local row
// indices), walked side by side when the four are of one type that has a four-runs kernel.
void dot_four_source_runs(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                          const Activations& x, float* const (&out)[4]) noexcept;

// out[r] = row r . x for the global rows [range.begin, range.end) of `sources` laid end to end.
// `out` holds one float per global row.
void dot_rows(std::span<const RowSource> sources, const Activations& x, Range range, std::span<float> out) noexcept;

}  // namespace brick::quant::detail
