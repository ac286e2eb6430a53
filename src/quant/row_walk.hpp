#pragma once
// How a mat-vec walks its rows from DRAM where the kernels leave it open: the rows kernels of the
// RowLockstepGemm files of quant/kernels/dot_kernel_list.hpp (the AVX2 and AVX-VNNI k-quants: their
// four-runs kernel, or their row kernel row after row), the AVX-512 k-quant rows kernels (four runs
// in lockstep, or rows one after another, dot_kquant_avx512_impl.hpp) and FusedGateUpOp's gate and
// up rows.
//
// FourRuns walks four runs of rows (lockstep.hpp) side by side, four DRAM streams where one row
// after another is one, and the gate-up op computes gate and up rows i and i + half side by side;
// OneAfterAnother walks the rows in order and the gate-up op in tiles of gate rows then up rows. On
// an Intel Xeon the AVX-512 k-quant 14336x4096 mat-vecs ran 1.09-1.21x as fast in four runs (Q6_K
// level), the fused QKV 1.09-1.10x and the gate-up op 1.24-1.27x; the AVX2 interleaved ones, a row
// of each run in turn, ran level with one row after another, and in lockstep 1.12-1.24x as fast
// (Q4_K, Q5_K; Q6_K 1.00-1.13x), the fused ops 1.11-1.18x. On AMD Zen 3 (against a row of each
// run in turn) one row after another was as fast or up to 1.4x as fast (the Q5_K mat-vec; the fused
// QKV and gate-up 1.1-1.3x), and on Zen 5 (AVX2) the mat-vecs took 0.75-0.87x the time at 1 thread
// and 0.49-0.72x at 2, the fused QKV 0.74-0.84x and the gate-up op 0.81-0.86x, reading 90-95% of
// the read probe; there the AVX-512 mat-vecs took 0.85-0.99x the time, and against the AVX2
// lockstep walk the AVX2 and AVX-VNNI mat-vecs ran 1.06-1.32x as fast at 1 thread and 1.26-2.77x at
// 2 (bench/RESULTS.md). So the walk follows the CPU's vendor. Each row's result is the row
// kernel's in either walk.
#include <cstddef>
#include <string_view>

namespace brick::quant::detail {

enum class RowWalk : unsigned char { OneAfterAnother, FourRuns };

// FourRuns for "GenuineIntel", OneAfterAnother for every other CPUID vendor.
RowWalk row_walk_for(std::string_view vendor) noexcept;

// This process's walk: this CPU's (cpu_features().vendor, decided once), or the one a RowWalkPin
// holds.
RowWalk row_walk() noexcept;

// Rows of fewer bytes than this (a thread's share of a mat-vec) walk as their kernel family runs
// them fastest from L2, whatever the CPU: the rows kernels of the RowLockstepGemm files one after
// another (on an Intel Xeon their rows in L2, 128 rows of 0.3-0.4 MB, ran 0.71-0.89x as fast in
// lockstep, where their 14336x4096 mat-vecs from DRAM ran 1.10-1.25x as fast), the AVX-512 k-quant
// rows kernels in four runs (their four rows share each activation load; on Zen 5 their rows in L2
// ran 0.76-0.91x as fast one after another). From this size on, row_walk().
inline constexpr std::size_t kFourRunsMinBytes = std::size_t{1} << 20;

// Whether a rows kernel walks `bytes` of rows in four runs: what a pinned walk says for any size;
// unpinned, row_walk() for rows of at least kFourRunsMinBytes, and `below` (the kernel family's
// walk from L2) for fewer.
bool walks_in_four_runs(std::size_t bytes, RowWalk below) noexcept;

// Pins row_walk() to one walk while it lives, so that tests cover both walks on any CPU. Not for
// use while another thread computes.
class RowWalkPin {
 public:
  explicit RowWalkPin(RowWalk walk) noexcept;
  ~RowWalkPin();
  RowWalkPin(const RowWalkPin&) = delete;
  RowWalkPin& operator=(const RowWalkPin&) = delete;

 private:
  int previous_;
};

}  // namespace brick::quant::detail
