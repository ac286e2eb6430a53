#include "brick/graph/roofline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "brick/core/cpu_features.hpp"
#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "brick/runtime/memory/aligned_buffer.hpp"
#include "graph/json_document.hpp"
#include "graph/kernels/peak_kernels.hpp"

namespace brick::graph {
namespace {

constexpr std::string_view kFormat = "brick.peaks";
constexpr std::int64_t kVersion = 1;
constexpr int kTries = 3;  // the best of three: a shared machine only ever makes a pass slower
constexpr std::size_t kReadBytes = std::size_t{256} << 20;

struct FmaLoop {
  double (*rounds)(std::uint64_t, float&) noexcept;
  std::uint64_t count;  // rounds for a few milliseconds
};

FmaLoop fma_loop() {
  switch (best_backend()) {
    case Backend::Avx512:
      return {&kernels::fma_rounds_avx512, std::uint64_t{1} << 21};
    case Backend::Avx2:
      return {&kernels::fma_rounds_avx2, std::uint64_t{1} << 22};
    case Backend::Auto:
    case Backend::Scalar:
      break;
  }
  return {&kernels::fma_rounds_scalar, std::uint64_t{1} << 22};
}

double seconds_between(std::uint64_t start_ns, std::uint64_t end_ns) {
  return static_cast<double>(std::max<std::uint64_t>(end_ns - start_ns, 1)) / 1e9;
}

// Every slot runs the loop on its own; the machine's rate is the sum of theirs.
double peak_gflops(ThreadPool& pool) {
  const FmaLoop loop = fma_loop();
  std::vector<double> rates(pool.size(), 0.0);
  double best = 0.0;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    pool.parallel_for(pool.size(), [&](Range range, std::size_t) {
      for (std::size_t slot = range.begin; slot < range.end; ++slot) {
        float seed = static_cast<float>(slot);
        const std::uint64_t start = kernel_clock_ns();
        const double flops = loop.rounds(loop.count, seed);
        const std::uint64_t end = kernel_clock_ns();
        rates[slot] = flops / seconds_between(start, end) / 1e9;
      }
    });
    double total = 0.0;
    for (const double rate : rates) total += rate;
    best = std::max(best, total);
  }
  return best;
}

double peak_gb_per_second(ThreadPool& pool) {
  AlignedBuffer buffer = AlignedBuffer::page_aligned(kReadBytes);
  std::memset(buffer.data(), 1, kReadBytes);  // touched, so the reads reach memory
  const auto read = best_backend() == Backend::Scalar ? &kernels::read_sum_scalar : &kernels::read_sum_avx2;
  const std::size_t slices = pool.size();
  const std::size_t slice = kReadBytes / slices / 256 * 256;
  std::vector<std::uint64_t> sums(slices, 0);
  double best = 0.0;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    const std::uint64_t start = kernel_clock_ns();
    pool.parallel_for(slices, [&](Range range, std::size_t) {
      for (std::size_t s = range.begin; s < range.end; ++s) sums[s] = read(buffer.data() + s * slice, slice);
    });
    const std::uint64_t end = kernel_clock_ns();
    best = std::max(best, static_cast<double>(slice * slices) / seconds_between(start, end) / 1e9);
  }
  return best;
}

std::string cpu_name() {
  const CpuFeatures& cpu = cpu_features();
  return cpu.brand.empty() ? cpu.vendor : cpu.brand;
}

}  // namespace

void MachinePeaks::validate() const {
  if (!(std::isfinite(gflops_per_second) && gflops_per_second > 0.0 && std::isfinite(gb_per_second) &&
        gb_per_second > 0.0)) {
    throw InvalidArgument(fmt::format("MachinePeaks: {} GFLOP/s and {} GB/s; both must be finite and positive",
                                      gflops_per_second, gb_per_second));
  }
}

std::string_view name(RooflineClass bound) noexcept {
  switch (bound) {
    case RooflineClass::MemoryBound:
      return "memory-bound";
    case RooflineClass::ComputeBound:
      return "compute-bound";
    case RooflineClass::Unknown:
      break;
  }
  return "unknown";
}

Roofline roofline(double flops, double bytes, std::uint64_t ns, const MachinePeaks& peaks) noexcept {
  Roofline point;
  if (!(bytes > 0.0) || ns == 0 || !(flops >= 0.0)) return point;
  const auto t = static_cast<double>(ns);
  point.intensity = flops / bytes;
  point.gflops_per_second = flops / t;
  point.gb_per_second = bytes / t;
  point.roof_gflops_per_second = std::min(peaks.gflops_per_second, point.intensity * peaks.gb_per_second);
  point.bound = point.intensity < peaks.ridge_point() ? RooflineClass::MemoryBound : RooflineClass::ComputeBound;
  point.fraction_of_roof = flops > 0.0 ? point.gflops_per_second / point.roof_gflops_per_second
                                       : point.gb_per_second / peaks.gb_per_second;
  return point;
}

std::string describe(const Roofline& point) {
  if (point.bound == RooflineClass::Unknown) return std::string(name(point.bound));
  return fmt::format("{}, {:.0f}% of the roof", name(point.bound), 100.0 * point.fraction_of_roof);
}

MachinePeaks calibrate_peaks(ThreadPool& pool) {
  MachinePeaks peaks{peak_gflops(pool), peak_gb_per_second(pool)};
  peaks.validate();
  return peaks;
}

MachinePeaks cached_peaks(const std::filesystem::path& cache, ThreadPool& pool) {
  const std::string cpu = cpu_name();
  try {
    const nlohmann::json document = detail::read_json_file(cache, 1 << 16);
    const detail::JsonObject root(document, cache.string());
    if (root.string("format") == kFormat && root.integer("version", 0, INT64_MAX) == kVersion &&
        root.string("cpu") == cpu && root.unsigned_integer("threads") == pool.size()) {
      const MachinePeaks peaks{root.number("gflops_per_second"), root.number("gb_per_second")};
      peaks.validate();
      return peaks;
    }
  } catch (const Error&) {
    // No cache yet, or one that does not read as this machine's: measure again.
  }
  const MachinePeaks peaks = calibrate_peaks(pool);
  const nlohmann::json document = {{"format", kFormat},
                                   {"version", kVersion},
                                   {"cpu", cpu},
                                   {"threads", pool.size()},
                                   {"gflops_per_second", peaks.gflops_per_second},
                                   {"gb_per_second", peaks.gb_per_second}};
  write_file_atomically(cache, document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return peaks;
}

}  // namespace brick::graph
