#pragma once
// `brick run --graph FILE.dot|FILE.json` and `--critical-path`: the execution graph of the run,
// written to a file and summarized in the terminal with slack and roofline classes (against the
// machine's peaks, measured once and cached in the cache folder).
#include <optional>
#include <string>

#include "brick/graph/execution_graph.hpp"
#include "brick/graph/roofline.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::cli {

// This machine's peaks, measured once and cached in the cache folder; nullopt (with a note on
// stderr) when the cache cannot be written.
std::optional<graph::MachinePeaks> machine_peaks(ThreadPool& pool);

struct GraphOutput {
  std::string path;  // --graph: empty for none
  bool critical_path = false;

  bool wanted() const noexcept { return !path.empty() || critical_path; }
  // Before the run: InvalidArgument for a file name that is not .dot or .json, IoError when it
  // cannot be written.
  void check() const;
  // After the run: writes the file and prints the critical path (to stderr when stdout holds JSON).
  void write(const graph::ExecutionGraph& graph, ThreadPool& pool, bool json) const;
};

}  // namespace brick::cli
