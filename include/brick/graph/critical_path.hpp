#pragma once
// The critical path of an execution graph: the chain of work that decides how long the run takes,
// and for every node its slack, how much longer it could have taken without lengthening the run.
//
// The model. A node without children is an activity of its duration. Sequence and DependsOn edges
// order activities: `to` starts after `from` ends, except that a DependsOn edge into a Sync node
// holds back the sync's end (a join ends when what it waits for ends). Contains and Launches edges
// are rolled up: a parent starts before its children and ends after them, and takes at least its
// own measured duration; what it measured beyond the longest path through its children (their
// set-up, the gaps between them) is its own time, an activity after its children. So a path runs
// down to the kernels, and counts each interval once: its length is the sum of the activities on
// it. A node's parent is the source of its first Contains or Launches edge.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "brick/graph/execution_graph.hpp"
#include "brick/graph/roofline.hpp"

namespace brick::graph {

struct CriticalPath {
  std::uint64_t length_ns = 0;
  // The activities on the path in execution order: nodes without children, and parents whose own
  // time is on it.
  std::vector<NodeId> nodes;
  std::vector<std::uint64_t> own_ns;    // per node, indexed by NodeId: its duration, or a parent's own time
  std::vector<std::uint64_t> slack_ns;  // per node, indexed by NodeId; 0 on the path
};

// StateError naming a node on a cycle (of ordering edges among one parent's children, or of
// parent edges).
CriticalPath critical_path(const ExecutionGraph& graph);

// The `count` slowest Kernel nodes, slowest first (equal durations: the lower id first).
std::vector<NodeId> slowest_kernels(const ExecutionGraph& graph, std::size_t count);

// A table for a terminal: the path's length and size, the `rows` activities on it that take the
// longest, with their time, share of the path and (given peaks) roofline class; then the kernels
// off the path with the least slack, the next to become critical.
std::string describe(const ExecutionGraph& graph, const CriticalPath& path, const std::optional<MachinePeaks>& peaks,
                     std::size_t rows = 20);

}  // namespace brick::graph
