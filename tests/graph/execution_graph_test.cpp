#include "brick/graph/execution_graph.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

Node make(NodeKind kind, std::string_view label, std::int32_t layer = -1, std::uint64_t duration = 0) {
  Node node;
  node.kind = kind;
  node.label = label;
  node.layer = layer;
  node.duration_ns = duration;
  return node;
}

std::vector<Edge> collect(const ExecutionGraph::EdgeRange& range) { return {range.begin(), range.end()}; }

TEST(ExecutionGraph, HoldsEveryNodeKindWithItsFields) {
  ExecutionGraph graph;
  Node transfer = make(NodeKind::Transfer, "blk.0.kv_write/kv_cache", 0, 10);
  transfer.source = "k,v rows";
  transfer.destination = "kv_cache";
  transfer.direction = TransferDirection::HostCopy;
  transfer.bytes = 2048;
  Node sync = make(NodeKind::Sync, "join", 0, 5);
  sync.waits_for = "pool workers";
  Node kernel = make(NodeKind::Kernel, "dot_q4k_q8k_avx2", 0, 100);
  kernel.backend = Backend::Avx2;
  kernel.elements = 256;
  kernel.flops = 2e6;
  kernel.bytes = 1e6;
  Node brick = make(NodeKind::Brick, "blk.0.qkv", 0, 120);
  brick.brick = BrickId::QkvProjection;
  for (const Node& node : {make(NodeKind::Layer, "layer 0", 0), brick, kernel, transfer, sync, make(NodeKind::Scope, "prompt")}) {
    graph.add_node(node);
  }
  ASSERT_EQ(graph.size(), 6u);
  for (NodeId id = 0; id < graph.size(); ++id) EXPECT_EQ(graph.node(id).kind, kNodeKinds[id]);
  EXPECT_EQ(graph.node(1).brick, BrickId::QkvProjection);
  EXPECT_EQ(graph.node(2).backend, Backend::Avx2);
  EXPECT_DOUBLE_EQ(graph.node(2).arithmetic_intensity(), 2.0);
  EXPECT_DOUBLE_EQ(graph.node(2).gflops_per_second(), 2e4);  // 2e6 FLOP in 100 ns
  EXPECT_DOUBLE_EQ(graph.node(2).gb_per_second(), 1e4);
  EXPECT_EQ(graph.node(3).source, "k,v rows");
  EXPECT_EQ(graph.node(3).destination, "kv_cache");
  EXPECT_EQ(graph.node(4).waits_for, "pool workers");
  EXPECT_EQ(name(NodeKind::Transfer), "transfer");
  for (const NodeKind kind : kNodeKinds) EXPECT_EQ(parse_node_kind(name(kind)), kind);
  for (const EdgeKind kind : kEdgeKinds) EXPECT_EQ(parse_edge_kind(name(kind)), kind);
  EXPECT_FALSE(parse_node_kind("Layer"));
}

TEST(ExecutionGraph, EveryEdgeKindIsQueriedFromBothEnds) {
  ExecutionGraph graph;
  const NodeId layer = graph.add_node(make(NodeKind::Layer, "layer 0", 0));
  const NodeId a = graph.add_node(make(NodeKind::Brick, "a", 0));
  const NodeId b = graph.add_node(make(NodeKind::Brick, "b", 0));
  const NodeId k = graph.add_node(make(NodeKind::Kernel, "b/k", 0));
  graph.add_edge(layer, a, EdgeKind::Contains);
  graph.add_edge(layer, b, EdgeKind::Contains);
  graph.add_edge(a, b, EdgeKind::Sequence);
  graph.add_edge(a, b, EdgeKind::DependsOn);
  graph.add_edge(b, k, EdgeKind::Launches);

  EXPECT_EQ(graph.children(layer), (std::vector<NodeId>{a, b}));
  EXPECT_EQ(graph.children(b), (std::vector<NodeId>{k}));
  EXPECT_EQ(graph.parent(k), b);
  EXPECT_EQ(graph.parent(a), layer);
  EXPECT_FALSE(graph.parent(layer));
  EXPECT_EQ(graph.roots(), (std::vector<NodeId>{layer}));
  EXPECT_EQ(collect(graph.out_edges(a)),
            (std::vector<Edge>{{a, b, EdgeKind::Sequence}, {a, b, EdgeKind::DependsOn}}));
  EXPECT_EQ(collect(graph.in_edges(b)), (std::vector<Edge>{{layer, b, EdgeKind::Contains},
                                                           {a, b, EdgeKind::Sequence},
                                                           {a, b, EdgeKind::DependsOn}}));
  EXPECT_TRUE(graph.out_edges(k).empty());
  EXPECT_EQ(graph.edge_count(), 5u);
}

TEST(ExecutionGraph, NamesAreUniquePerLabelLayerAndCall) {
  ExecutionGraph graph;
  std::set<std::string> names;
  for (int token = 0; token < 3; ++token) {
    for (std::int32_t layer = 0; layer < 2; ++layer) {
      names.insert(graph.name(graph.add_node(make(NodeKind::Brick, "rms_norm", layer))));
      names.insert(graph.name(graph.add_node(make(NodeKind::Brick, "rms_norm", layer))));
    }
    names.insert(graph.name(graph.add_node(make(NodeKind::Brick, "output_norm"))));
  }
  EXPECT_EQ(names.size(), graph.size());
  EXPECT_EQ(graph.name(0), "rms_norm@0#0");
  EXPECT_EQ(graph.name(1), "rms_norm@0#1");
  EXPECT_EQ(graph.name(4), "output_norm#0");
  EXPECT_EQ(graph.node(5).call, 2u);  // the third rms_norm of layer 0
  EXPECT_EQ(graph.find("rms_norm@1#3"), 8u);
  EXPECT_FALSE(graph.find("rms_norm@1#9"));
}

TEST(ExecutionGraph, RefusesBadNodesAndEdgesWithTypedErrors) {
  ExecutionGraph graph;
  EXPECT_THROW(graph.add_node(make(NodeKind::Brick, "")), InvalidArgument);
  EXPECT_THROW(graph.add_node(make(NodeKind::Brick, "a#b")), InvalidArgument);
  EXPECT_THROW(graph.add_node(make(NodeKind::Brick, "a@b")), InvalidArgument);
  EXPECT_THROW(graph.add_node(make(NodeKind::Brick, "\xff")), InvalidArgument);
  EXPECT_THROW(graph.add_node(make(static_cast<NodeKind>(9), "x")), InvalidArgument);
  const NodeId a = graph.add_node(make(NodeKind::Brick, "a"));
  EXPECT_THROW(graph.add_edge(a, a, EdgeKind::Sequence), InvalidArgument);
  EXPECT_THROW(graph.add_edge(a, 7, EdgeKind::Sequence), InvalidArgument);
  EXPECT_THROW(graph.add_edge(a, graph.add_node(make(NodeKind::Brick, "b")), static_cast<EdgeKind>(4)),
               InvalidArgument);
  EXPECT_THROW(graph.node(9), InvalidArgument);
  EXPECT_THROW(graph.children(9), InvalidArgument);
  EXPECT_THROW(ExecutionGraph(0), InvalidArgument);
  EXPECT_EQ(graph.edge_count(), 0u);
}

TEST(ExecutionGraph, PastItsLimitNodesAreCountedAsDropped) {
  ExecutionGraph graph(3);
  std::vector<NodeId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(graph.add_node(make(NodeKind::Kernel, "k")));
  EXPECT_EQ(graph.size(), 3u);
  EXPECT_EQ(graph.dropped_nodes(), 2u);
  EXPECT_EQ(ids[3], kNoNode);
  graph.add_edge(ids[2], ids[3], EdgeKind::Sequence);  // to a dropped node: not added
  EXPECT_EQ(graph.edge_count(), 0u);
  graph.clear();
  EXPECT_EQ(graph.size(), 0u);
  EXPECT_EQ(graph.dropped_nodes(), 0u);
  EXPECT_EQ(graph.node_limit(), 3u);
}

TEST(ExecutionGraph, AMovedGraphKeepsItsStrings) {
  ExecutionGraph graph;
  for (int i = 0; i < 100; ++i) graph.add_node(make(NodeKind::Kernel, fmt::format("k{}", i)));
  const ExecutionGraph moved = std::move(graph);
  EXPECT_EQ(moved.node(42).label, "k42");
  EXPECT_EQ(moved.name(99), "k99#0");
}

TEST(ExecutionGraph, QueriesOnAWideNodeWalkOnlyItsOwnEdges) {
  ExecutionGraph graph;
  const NodeId hub = graph.add_node(make(NodeKind::Scope, "hub"));
  const NodeId other = graph.add_node(make(NodeKind::Scope, "other"));
  for (int i = 0; i < 1000; ++i) graph.add_edge(hub, graph.add_node(make(NodeKind::Kernel, "k")), EdgeKind::Contains);
  const NodeId lone = graph.add_node(make(NodeKind::Kernel, "lone"));
  graph.add_edge(other, lone, EdgeKind::Contains);
  EXPECT_EQ(graph.children(other), (std::vector<NodeId>{lone}));
  EXPECT_EQ(graph.children(hub).size(), 1000u);
  EXPECT_EQ(collect(graph.in_edges(lone)).size(), 1u);
}

}  // namespace
}  // namespace brick::graph
