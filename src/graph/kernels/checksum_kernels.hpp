#pragma once
// The loops of a kernel checksum (graph/kernel_checksum.hpp) per ISA: XXH3-64 with AVX2 (the
// xxHash library's own code, inlined into the AVX2 translation unit; every vector width gives the
// same hash, and AVX2 already reads 16 KiB well under a microsecond), and the numeric summary's lane
// sums. Each never allocates or throws.
#include <cstddef>
#include <cstdint>

namespace brick::graph::kernels {

inline constexpr std::size_t kSummaryLanes = 8;

// Value i of a run goes to lane i % 8: each lane's additions happen in one fixed order, so every
// ISA gives the same bits (a float's square is exact in double, so even a fused multiply-add
// rounds the same). A value that is not finite adds 0 and is counted.
struct SummaryLanes {
  double sum[kSummaryLanes] = {};
  double squares[kSummaryLanes] = {};
  float low[kSummaryLanes];
  float high[kSummaryLanes];
  std::uint64_t not_finite[kSummaryLanes] = {};

  SummaryLanes() noexcept;
  // One value into `lane`: the reference every ISA's loop matches.
  void add(std::size_t lane, float value) noexcept;
};

// Adds values[0, 8 * blocks) to the lanes.
void summary_lanes_scalar(const float* values, std::size_t blocks, SummaryLanes& lanes) noexcept;
void summary_lanes_avx2(const float* values, std::size_t blocks, SummaryLanes& lanes) noexcept;

std::uint64_t xxh3_64_avx2(const void* data, std::size_t bytes) noexcept;

}  // namespace brick::graph::kernels
