#pragma once
// The per-ISA kernels of the tracer's statistics. compute_tensor_stats takes one block's sums, from
// which tensor_stats.cpp merges the blocks (Chan et al.'s pairwise update). A block is small enough
// (kTensorStatsBlock values) to stay in L1 between the two passes each kernel makes: the finite
// values' count, sum, min and max, then their squared deviations from the block's own mean, in
// double. The residual ratio of an activation takes two sums of squares.
#include <cstddef>
#include <cstdint>
#include <limits>

namespace brick::trace::kernels {

inline constexpr std::size_t kTensorStatsBlock = 256;

struct BlockSums {
  std::uint32_t count = 0;  // finite values
  std::uint32_t nan = 0;
  double sum = 0.0;
  double m2 = 0.0;  // sum of (x - sum / count)^2 over the finite values
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
};

using TensorBlockKernel = BlockSums (*)(const float* x, std::size_t n) noexcept;

// Any n up to kTensorStatsBlock.
BlockSums tensor_block_sums_scalar(const float* x, std::size_t n) noexcept;
BlockSums tensor_block_sums_avx2(const float* x, std::size_t n) noexcept;
BlockSums tensor_block_sums_avx512(const float* x, std::size_t n) noexcept;

// For an activation's residual ratio: sum r^2 and sum (x - r)^2 over n values, in double.
struct ResidualSums {
  double residual = 0.0;
  double delta = 0.0;
};

using ResidualKernel = ResidualSums (*)(const float* x, const float* r, std::size_t n) noexcept;

ResidualSums residual_sums_scalar(const float* x, const float* r, std::size_t n) noexcept;
ResidualSums residual_sums_avx2(const float* x, const float* r, std::size_t n) noexcept;
ResidualSums residual_sums_avx512(const float* x, const float* r, std::size_t n) noexcept;

}  // namespace brick::trace::kernels
