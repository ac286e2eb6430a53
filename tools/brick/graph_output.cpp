#include "graph_output.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "brick/core/error.hpp"
#include "brick/graph/critical_path.hpp"
#include "brick/graph/graph_export.hpp"
#include "commands.hpp"
#include "default_model.hpp"

namespace brick::cli {

void GraphOutput::check() const {
  if (path.empty()) return;
  if (!graph::graph_format(path)) {
    throw InvalidArgument(fmt::format("--graph {}: the file name must end in .dot (Graphviz) or .json", path));
  }
  require_writable(path, "--graph");
}

std::optional<graph::MachinePeaks> machine_peaks(ThreadPool& pool) {
  try {
    const std::filesystem::path folder = cache_folder();
    std::error_code ignored;  // a folder that cannot be made shows as the cache's IoError below
    std::filesystem::create_directories(folder, ignored);
    return graph::cached_peaks(folder / "peaks.json", pool);
  } catch (const IoError& error) {
    fmt::print(stderr, "brick: no roofline classes: {}\n", error.what());
  }
  return std::nullopt;
}

void GraphOutput::write(const graph::ExecutionGraph& graph, ThreadPool& pool, bool json) const {
  const std::optional<graph::MachinePeaks> peaks = machine_peaks(pool);
  if (!path.empty()) graph::write_graph(path, graph, {.peaks = peaks});
  if (!critical_path) return;
  if (peaks) {
    fmt::print(json ? stderr : stdout, "roofline against {:.1f} GFLOP/s and {:.1f} GB/s (ridge {:.2f} FLOP/byte)\n",
               peaks->gflops_per_second, peaks->gb_per_second, peaks->ridge_point());
  }
  fmt::print(json ? stderr : stdout, "{}", graph::describe(graph, graph::critical_path(graph), peaks));
}

}  // namespace brick::cli
