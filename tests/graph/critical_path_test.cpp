#include "brick/graph/critical_path.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

NodeId add(ExecutionGraph& graph, std::string_view label, std::uint64_t duration, NodeKind kind = NodeKind::Kernel) {
  Node node;
  node.kind = kind;
  node.label = label;
  node.duration_ns = duration;
  return graph.add_node(node);
}

std::uint64_t own_sum(const CriticalPath& path) {
  std::uint64_t total = 0;
  for (const NodeId v : path.nodes) total += path.own_ns[v];
  return total;
}

TEST(CriticalPath, AChainBeatsAShorterParallelBranch) {
  ExecutionGraph g;
  const NodeId a = add(g, "a", 3), b = add(g, "b", 3), c = add(g, "c", 3), d = add(g, "d", 5);
  g.add_edge(a, b, EdgeKind::Sequence);
  g.add_edge(b, c, EdgeKind::Sequence);
  const CriticalPath path = critical_path(g);
  EXPECT_EQ(path.length_ns, 9u);
  EXPECT_EQ(path.nodes, (std::vector<NodeId>{a, b, c}));
  EXPECT_EQ(path.slack_ns[a], 0u);
  EXPECT_EQ(path.slack_ns[c], 0u);
  EXPECT_EQ(path.slack_ns[d], 4u);
}

TEST(CriticalPath, DependenciesBeatInsertionOrder) {
  ExecutionGraph g;
  const NodeId last = add(g, "last", 2);
  const NodeId loose = add(g, "loose", 1);
  const NodeId middle = add(g, "middle", 2);
  const NodeId first = add(g, "first", 2);
  g.add_edge(first, middle, EdgeKind::DependsOn);
  g.add_edge(middle, last, EdgeKind::DependsOn);
  const CriticalPath path = critical_path(g);
  EXPECT_EQ(path.nodes, (std::vector<NodeId>{first, middle, last}));
  EXPECT_EQ(path.length_ns, 6u);
  EXPECT_EQ(path.slack_ns[loose], 5u);
}

TEST(CriticalPath, SlackIsWhatABranchCouldGrowBeforeItDecides) {
  // start -> {long 5, short 2} -> end
  ExecutionGraph g;
  const NodeId start = add(g, "start", 1), slow = add(g, "long", 5), fast = add(g, "short", 2), end = add(g, "end", 1);
  for (const NodeId branch : {slow, fast}) {
    g.add_edge(start, branch, EdgeKind::DependsOn);
    g.add_edge(branch, end, EdgeKind::DependsOn);
  }
  const CriticalPath path = critical_path(g);
  EXPECT_EQ(path.length_ns, 7u);
  EXPECT_EQ(path.nodes, (std::vector<NodeId>{start, slow, end}));
  EXPECT_EQ(path.slack_ns[fast], 3u);
  EXPECT_EQ(path.slack_ns[start], 0u);
}

TEST(CriticalPath, ContainsIsRolledUpWithoutCountingAnythingTwice) {
  ExecutionGraph g;
  const NodeId layer = add(g, "layer", 10, NodeKind::Layer);
  const NodeId a = add(g, "a", 3, NodeKind::Brick), b = add(g, "b", 4, NodeKind::Brick);
  const NodeId next = add(g, "next", 2, NodeKind::Layer);
  g.add_edge(layer, a, EdgeKind::Contains);
  g.add_edge(layer, b, EdgeKind::Contains);
  g.add_edge(a, b, EdgeKind::Sequence);
  g.add_edge(layer, next, EdgeKind::Sequence);
  const CriticalPath path = critical_path(g);
  // The layer's 10 ns hold its children's 7 and 3 of its own; the path goes down to them.
  EXPECT_EQ(path.length_ns, 12u);
  EXPECT_EQ(path.nodes, (std::vector<NodeId>{a, b, layer, next}));
  EXPECT_EQ(path.own_ns[layer], 3u);
  EXPECT_EQ(own_sum(path), path.length_ns);

  // A parent that measured less than its children (its timer saw only part) takes their time.
  ExecutionGraph short_parent;
  const NodeId p = add(short_parent, "p", 2, NodeKind::Brick);
  const NodeId k = add(short_parent, "k", 5);
  short_parent.add_edge(p, k, EdgeKind::Launches);
  const CriticalPath rolled = critical_path(short_parent);
  EXPECT_EQ(rolled.length_ns, 5u);
  EXPECT_EQ(rolled.nodes, (std::vector<NodeId>{k}));
  EXPECT_EQ(rolled.own_ns[p], 0u);
}

TEST(CriticalPath, AJoinEndsWhenTheSlowestWorkerEnds) {
  // A parallel pass of 10 ns: the caller's piece (4 ns), then the join; a worker's piece of 9 ns.
  ExecutionGraph g;
  const NodeId pass = add(g, "pass", 10);
  const NodeId caller = add(g, "pass/slot 0", 4), worker = add(g, "pass/slot 1", 9);
  const NodeId join = add(g, "pass/join", 3, NodeKind::Sync);
  g.add_edge(pass, caller, EdgeKind::Launches);
  g.add_edge(pass, worker, EdgeKind::Launches);
  g.add_edge(pass, join, EdgeKind::Contains);
  g.add_edge(caller, join, EdgeKind::Sequence);
  g.add_edge(worker, join, EdgeKind::DependsOn);
  const CriticalPath path = critical_path(g);
  EXPECT_EQ(path.length_ns, 10u);
  EXPECT_EQ(path.nodes, (std::vector<NodeId>{worker, pass}));  // the worker, then the pass's own 1 ns
  EXPECT_EQ(path.own_ns[pass], 1u);
  EXPECT_EQ(path.slack_ns[caller], 2u);  // 4 + 3 + 1 of 10
  EXPECT_EQ(path.slack_ns[worker], 0u);
}

TEST(CriticalPath, ACycleIsAStateError) {
  ExecutionGraph g;
  const NodeId a = add(g, "a", 1), b = add(g, "b", 1);
  g.add_edge(a, b, EdgeKind::Sequence);
  g.add_edge(b, a, EdgeKind::DependsOn);
  EXPECT_THROW(critical_path(g), StateError);
  ExecutionGraph nested;
  const NodeId p = add(nested, "p", 1), c = add(nested, "c", 1);
  nested.add_edge(p, c, EdgeKind::Contains);
  nested.add_edge(c, p, EdgeKind::Contains);
  EXPECT_THROW(critical_path(nested), StateError);
  EXPECT_EQ(critical_path(ExecutionGraph()).length_ns, 0u);
}

TEST(SlowestKernels, ComeSlowestFirstWithTiesById) {
  ExecutionGraph g;
  add(g, "a", 5);
  add(g, "b", 9);
  add(g, "brick", 100, NodeKind::Brick);
  add(g, "c", 5);
  add(g, "d", 1);
  EXPECT_EQ(slowest_kernels(g, 3), (std::vector<NodeId>{1, 0, 3}));
  EXPECT_EQ(slowest_kernels(g, 10).size(), 4u);
}

TEST(CriticalPath, TheDescriptionNamesTheNodesWithTheirRoofline) {
  ExecutionGraph g;
  Node kernel;
  kernel.kind = NodeKind::Kernel;
  kernel.label = "blk.0.qkv/dot_q4k_q8k_avx2";
  kernel.layer = 0;
  kernel.duration_ns = 1'000'000;
  kernel.flops = 2e6;
  kernel.bytes = 1e6;
  const NodeId k = g.add_node(kernel);
  const NodeId other = add(g, "other", 500);
  (void)other;
  const std::string text = describe(g, critical_path(g), MachinePeaks{100.0, 10.0});
  EXPECT_NE(text.find("critical path: 1.000 ms through 1 of 2 nodes"), std::string::npos) << text;
  EXPECT_NE(text.find(g.name(k)), std::string::npos) << text;
  EXPECT_NE(text.find("memory-bound, 10% of the roof"), std::string::npos) << text;
  EXPECT_NE(text.find("off the path (least slack first)"), std::string::npos) << text;
}

}  // namespace
}  // namespace brick::graph
