#pragma once
// The roofline model: a kernel that does F FLOPs over B bytes in t seconds has arithmetic
// intensity I = F / B; on a machine with peak compute P (GFLOP/s) and read bandwidth W (GB/s) it
// can reach at most min(P, I * W). Below the ridge point I = P / W it is memory-bound, above it
// compute-bound; how close it came is its achieved rate over that roof.
//
// The peaks come from the user, or from calibrate_peaks(): an FMA loop on every pool thread with
// the widest vectors the CPU has, and a read of a 256 MiB buffer on every thread. cached_peaks()
// measures once per machine and thread count and keeps the result in a JSON file.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "brick/graph/node.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::graph {

struct MachinePeaks {
  double gflops_per_second = 0.0;
  double gb_per_second = 0.0;

  // FLOPs per byte where the two roofs meet.
  double ridge_point() const noexcept { return gflops_per_second / gb_per_second; }
  // InvalidArgument unless both peaks are finite and positive.
  void validate() const;
};

enum class RooflineClass : std::uint8_t { Unknown, MemoryBound, ComputeBound };

// "unknown", "memory-bound", "compute-bound".
std::string_view name(RooflineClass bound) noexcept;

struct Roofline {
  RooflineClass bound = RooflineClass::Unknown;  // Unknown: no bytes, or no duration
  double intensity = 0.0;                        // FLOPs per byte
  double gflops_per_second = 0.0;                // achieved
  double gb_per_second = 0.0;                    // achieved
  double roof_gflops_per_second = 0.0;           // min(peak, intensity * bandwidth)
  double fraction_of_roof = 0.0;                 // achieved / roof (for a kernel without FLOPs: of the bandwidth)
};

// For `flops` and `bytes` done in `ns` nanoseconds. `peaks` must be valid.
Roofline roofline(double flops, double bytes, std::uint64_t ns, const MachinePeaks& peaks) noexcept;
inline Roofline roofline(const Node& node, const MachinePeaks& peaks) noexcept {
  return roofline(node.flops, node.bytes, node.duration_ns, peaks);
}

// "memory-bound, 64% of the roof" or "unknown".
std::string describe(const Roofline& point);

// Measures this machine's peaks with every thread of `pool` (about a quarter of a second).
// CapacityError when the 256 MiB read buffer cannot be allocated.
MachinePeaks calibrate_peaks(ThreadPool& pool);

// The peaks kept in `cache` for this CPU and pool size; otherwise (no file, another CPU or thread
// count, or a file that does not read as one of these) measured and written there atomically.
// IoError when the file cannot be written.
MachinePeaks cached_peaks(const std::filesystem::path& cache, ThreadPool& pool);

}  // namespace brick::graph
