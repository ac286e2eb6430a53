#pragma once
// The row loop shared by matvec and the fused projections: several weight matrices that read the
// same Q8_K activation are laid end to end as one range of rows, so a single balance211 split over
// the pool covers all of them in one parallel pass.
#include <array>
#include <cstddef>
#include <span>

#include "brick/quant/dot_kernels.hpp"
#include "brick/quant/matvec.hpp"

namespace brick::quant::detail {

// The rows of one matrix with the kernel picked for it.
struct RowSource {
  const void* blocks = nullptr;
  std::size_t rows = 0;
  std::size_t row_bytes = 0;
  // Exactly one type's kernels are set.
  DotQ5KRowsKernel q5k_rows = nullptr;
  DotQ6KRowsKernel q6k_rows = nullptr;
  DotQ5KFourRunsKernel q5k_four_runs = nullptr;
  DotQ6KFourRunsKernel q6k_four_runs = nullptr;

  const void* row(std::size_t r) const noexcept { return static_cast<const unsigned char*>(blocks) + r * row_bytes; }
};

RowSource row_source(const KQuantMatrix& w, DotIsa isa);

// out[i] = row (first + i) of `source` (local row indices) . xq for i < count.
inline void dot_source_rows(const RowSource& source, std::size_t first, std::size_t count,
                            std::span<const BlockQ8K> xq, float* out) noexcept {
  const void* w = source.row(first);
  if (source.q5k_rows != nullptr) {
    source.q5k_rows(static_cast<const BlockQ5K*>(w), count, xq.data(), xq.size(), out);
  } else {
    source.q6k_rows(static_cast<const BlockQ6K*>(w), count, xq.data(), xq.size(), out);
  }
}

// out[i][j] = row firsts[i] + j of sources[i] . xq for j < count: four runs of rows (local row
// indices), walked side by side when the four are of one type.
void dot_four_source_runs(const RowSource* const (&sources)[4], const std::size_t (&firsts)[4], std::size_t count,
                          std::span<const BlockQ8K> xq, float* const (&out)[4]) noexcept;

// out[r] = row r . xq for the global rows [range.begin, range.end) of `sources` laid end to end.
// `out` holds one float per global row.
void dot_rows(std::span<const RowSource> sources, std::span<const BlockQ8K> xq, Range range,
              std::span<float> out) noexcept;

// xq for x, quantized by `backend`'s kernel into the calling thread's scratch buffer (valid until
// the thread's next call).
std::span<const BlockQ8K> quantize_activation(std::span<const float> x, Backend backend);

}  // namespace brick::quant::detail
