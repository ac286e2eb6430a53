#include "brick/graph/graph_recorder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "brick/core/brick_layer.hpp"
#include "brick/core/error.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/profile/profiling_observer.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "core/scale_op.hpp"

namespace brick::graph {
namespace {

using test::ScaleOp;

// out = x + 1 over `tokens` rows, as a decoder brick reports its tokens.
struct RowsOp {
  struct Input {
    std::span<const float> x;
    std::size_t tokens = 1;
  };
  std::string label = "rows";
  std::string_view name() const { return label; }
  BrickId id() const { return BrickId::Residual; }
  std::size_t output_size(const Input& in) const { return in.x.size(); }
  OpCost cost(const Input& in) const { return {in.tokens, static_cast<double>(in.x.size()), 8.0 * in.x.size()}; }
  void run(const Input& in, std::span<float> out, Backend) const {
    for (std::size_t i = 0; i < in.x.size(); ++i) out[i] = in.x[i] + 1.0f;
  }
};

// A brick with an inner kernel: a parallel pass over the pool in which slot 0 (the caller) waits
// until every worker has started its own piece, so that each worker's piece runs on the worker
// and the caller then waits in the join.
struct ParallelOp {
  struct Input {
    std::span<const float> x;
  };
  ThreadPool* pool;
  std::string_view name() const { return "parallel"; }
  BrickId id() const { return BrickId::Activation; }
  std::size_t output_size(const Input& in) const { return in.x.size(); }
  OpCost cost(const Input& in) const { return {1, static_cast<double>(in.x.size()), 8.0 * in.x.size()}; }
  void run(const Input& in, std::span<float> out, Backend backend) const {
    {
      KernelScope scope("double_rows", backend);
      std::atomic<std::size_t> started{0};
      pool->parallel_for(in.x.size(), [&](Range range, std::size_t slot) {
        if (slot == 0) {
          while (started.load() + 1 < pool->size()) std::this_thread::yield();
        } else {
          started.fetch_add(1);
        }
        for (std::size_t i = range.begin; i < range.end; ++i) out[i] = 2.0f * in.x[i];
      });
      scope.set_work(in.x.size(), static_cast<double>(in.x.size()), 8.0 * in.x.size());
    }
    if (KernelRecorder* recorder = active_kernel_recorder()) {
      recorder->transfer({"rows", "host buffer", TransferDirection::HostCopy, 4 * in.x.size(), 10, 20});
    }
  }
};

std::map<NodeKind, std::size_t> count_kinds(const ExecutionGraph& graph) {
  std::map<NodeKind, std::size_t> counts;
  for (NodeId v = 0; v < graph.size(); ++v) ++counts[graph.node(v).kind];
  return counts;
}

std::vector<NodeId> of_kind(const ExecutionGraph& graph, NodeKind kind) {
  std::vector<NodeId> ids;
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (graph.node(v).kind == kind) ids.push_back(v);
  }
  return ids;
}

bool has_edge(const ExecutionGraph& graph, NodeId from, NodeId to, EdgeKind kind) {
  const auto edges = graph.out_edges(from);
  return std::any_of(edges.begin(), edges.end(), [&](const Edge& e) { return e.to == to && e.kind == kind; });
}

TEST(GraphRecorder, RecordsEveryNodeAndEdgeKindFromARealRun) {
  ThreadPool pool(3);
  ComputeBrick scale(ScaleOp{}, {Finite{}}, Backend::Scalar);
  ComputeBrick parallel(ParallelOp{&pool}, {Finite{}}, Backend::Scalar);
  const std::vector<float> x(300, 1.0f);
  std::vector<float> mid(300), out(300);
  const ScaleOp::Input in{x};
  const ParallelOp::Input mid_in{mid};
  BrickLayer layer("blk.0");
  layer.add(scale, in, mid).add(parallel, mid_in, out);

  GraphRecorder recorder;
  {
    GraphScope prompt(recorder, "prompt");
    ASSERT_TRUE(layer.run(&recorder, 0).has_value());
  }
  EXPECT_EQ(out[0], 4.0f);
  const ExecutionGraph& g = recorder.graph();
  const auto kinds = count_kinds(g);
  EXPECT_EQ(kinds.at(NodeKind::Scope), 1u);
  EXPECT_EQ(kinds.at(NodeKind::Layer), 1u);
  EXPECT_EQ(kinds.at(NodeKind::Brick), 2u);
  EXPECT_EQ(kinds.at(NodeKind::Kernel), 4u);  // the pass and its three pieces
  EXPECT_EQ(kinds.at(NodeKind::Sync), 1u);
  EXPECT_EQ(kinds.at(NodeKind::Transfer), 1u);

  const NodeId scope = of_kind(g, NodeKind::Scope)[0];
  const NodeId layer_node = of_kind(g, NodeKind::Layer)[0];
  const std::vector<NodeId> bricks = of_kind(g, NodeKind::Brick);
  const NodeId pass = *g.find("parallel/double_rows@0#0");
  const NodeId join = of_kind(g, NodeKind::Sync)[0];
  EXPECT_TRUE(has_edge(g, scope, layer_node, EdgeKind::Contains));
  EXPECT_TRUE(has_edge(g, layer_node, bricks[0], EdgeKind::Contains));
  EXPECT_TRUE(has_edge(g, bricks[0], bricks[1], EdgeKind::Sequence));
  EXPECT_TRUE(has_edge(g, bricks[1], pass, EdgeKind::Launches));
  EXPECT_TRUE(has_edge(g, pass, join, EdgeKind::Contains));
  EXPECT_EQ(g.node(join).waits_for, "pool workers");
  EXPECT_EQ(g.node(pass).elements, 300u);
  EXPECT_EQ(g.node(pass).layer, 0);
  EXPECT_EQ(g.node(bricks[1]).elements, 1u);  // the brick's tokens
  EXPECT_DOUBLE_EQ(g.node(bricks[1]).bytes, 2400.0);
  for (std::size_t slot = 0; slot < 3; ++slot) {
    const NodeId piece = *g.find(fmt::format("parallel/double_rows/slot {}@0#0", slot));
    EXPECT_TRUE(has_edge(g, pass, piece, EdgeKind::Launches));
    EXPECT_EQ(g.node(piece).thread, slot);
    EXPECT_EQ(g.node(piece).elements, 100u);
    // The join waits for the workers' pieces; the caller's own piece comes before it on its thread.
    EXPECT_TRUE(has_edge(g, piece, join, slot == 0 ? EdgeKind::Sequence : EdgeKind::DependsOn)) << slot;
  }
  const NodeId transfer = of_kind(g, NodeKind::Transfer)[0];
  EXPECT_TRUE(has_edge(g, bricks[1], transfer, EdgeKind::Launches));
  EXPECT_EQ(g.node(transfer).label, "parallel/host buffer");
  EXPECT_DOUBLE_EQ(g.node(transfer).bytes, 1200.0);
  // Children lie within their parents' time.
  for (NodeId v = 0; v < g.size(); ++v) {
    if (const auto parent = g.parent(v); parent && g.node(v).kind != NodeKind::Transfer) {
      EXPECT_GE(g.node(v).start_ns, g.node(*parent).start_ns) << g.name(v);
      EXPECT_LE(g.node(v).end_ns(), g.node(*parent).end_ns()) << g.name(v);
    }
  }
  EXPECT_EQ(recorder.depth(), 0u);
  EXPECT_EQ(recorder.unplaced_kernel_events(), 0u);
}

TEST(GraphRecorder, IsTheThreadsKernelRecorderOnlyWhileANodeIsOpen) {
  GraphRecorder recorder;
  EXPECT_EQ(active_kernel_recorder(), nullptr);
  recorder.on_layer_begin(0);
  EXPECT_EQ(active_kernel_recorder(), &recorder);
  recorder.on_layer_end();
  EXPECT_EQ(active_kernel_recorder(), nullptr);
  GraphRecorder checksums_only({.record_nodes = false, .record_checksums = true});
  checksums_only.on_layer_begin(0);
  EXPECT_EQ(active_kernel_recorder(), nullptr);
  checksums_only.on_layer_end();
  {
    GraphRecorder left_open;
    left_open.on_layer_begin(1);
  }
  EXPECT_EQ(active_kernel_recorder(), nullptr);  // the destructor gave the thread back
}

TEST(GraphRecorder, ScopesBalanceWithLayersAndBricks) {
  GraphRecorder recorder;
  EXPECT_THROW(recorder.end_scope(), StateError);
  recorder.begin_scope("decode");
  recorder.on_layer_begin(3);
  EXPECT_THROW(recorder.end_scope(), StateError);  // the layer is innermost
  recorder.begin_scope("inner");
  EXPECT_THROW(recorder.on_layer_end(), StateError);  // the scope is innermost
  EXPECT_THROW(recorder.on_brick_end(BrickId::RmsNorm, "x", nullptr), StateError);
  recorder.end_scope();
  recorder.on_brick_begin(BrickId::RmsNorm, "norm");
  EXPECT_THROW(recorder.on_layer_begin(4), StateError);  // a brick left open
  recorder.on_brick_end(BrickId::RmsNorm, "norm", nullptr);
  EXPECT_EQ(recorder.depth(), 2u);
  recorder.on_layer_end();
  recorder.end_scope();
  EXPECT_EQ(recorder.depth(), 0u);
  const ExecutionGraph& g = recorder.graph();
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g.children(0), (std::vector<NodeId>{1}));
  EXPECT_EQ(g.children(1), (std::vector<NodeId>{2, 3}));
  EXPECT_EQ(g.name(1), "layer 3@3#0");
  EXPECT_EQ(g.node(2).layer, 3);  // a scope inside a layer is in it
  EXPECT_EQ(g.node(3).layer, 3);

  recorder.kernel_end({}, 0);  // no kernel open: counted, not thrown (kernels never throw)
  EXPECT_EQ(recorder.unplaced_kernel_events(), 1u);
  recorder.on_layer_begin(0);
  recorder.reset();
  EXPECT_EQ(recorder.depth(), 0u);
  EXPECT_EQ(recorder.graph().size(), 0u);
  EXPECT_EQ(active_kernel_recorder(), nullptr);
}

TEST(GraphRecorder, AGraphScopeLeftUnbalancedInsideStaysOpen) {
  GraphRecorder recorder;
  {
    GraphScope scope(recorder, "outer");
    recorder.on_layer_begin(0);  // never ended, as when an exception escapes a layer
  }
  EXPECT_EQ(recorder.depth(), 2u);
  recorder.reset();
}

TEST(GraphRecorder, NamesAreUniqueAcrossARunOfManyTokens) {
  ThreadPool pool(2);
  ComputeBrick scale(ScaleOp{}, {Finite{}}, Backend::Scalar);
  ComputeBrick parallel(ParallelOp{&pool}, {Finite{}}, Backend::Scalar);
  const std::vector<float> x(64, 1.0f);
  std::vector<float> mid(64), out(64);
  const ScaleOp::Input in{x};
  const ParallelOp::Input mid_in{mid};
  BrickLayer layer("blk");
  layer.add(scale, in, mid).add(parallel, mid_in, out).add(scale, in, mid);
  GraphRecorder recorder;
  for (int token = 0; token < 5; ++token) {
    for (std::size_t l = 0; l < 3; ++l) ASSERT_TRUE(layer.run(&recorder, l).has_value());
  }
  const ExecutionGraph& g = recorder.graph();
  std::set<std::string> names;
  for (NodeId v = 0; v < g.size(); ++v) names.insert(g.name(v));
  EXPECT_EQ(names.size(), g.size());
  EXPECT_TRUE(names.contains("scale@2#9"));  // two per layer run, five runs
  EXPECT_TRUE(names.contains("layer 1@1#4"));
  // Layers follow each other on the recording thread.
  const std::vector<NodeId> layers = of_kind(g, NodeKind::Layer);
  for (std::size_t i = 1; i < layers.size(); ++i) EXPECT_TRUE(has_edge(g, layers[i - 1], layers[i], EdgeKind::Sequence));
}

TEST(GraphRecorder, PastTheNodeLimitNodesAreDroppedAndTheScopesStillBalance) {
  ComputeBrick scale(ScaleOp{}, {Finite{}}, Backend::Scalar);
  const std::vector<float> x(8, 1.0f);
  std::vector<float> out(8);
  const ScaleOp::Input in{x};
  BrickLayer layer("l");
  layer.add(scale, in, out).add(scale, in, out);
  GraphRecorder recorder({.node_limit = 4});
  for (std::size_t i = 0; i < 3; ++i) ASSERT_TRUE(layer.run(&recorder, i).has_value());
  EXPECT_EQ(recorder.graph().size(), 4u);
  EXPECT_EQ(recorder.graph().dropped_nodes(), 5u);
  EXPECT_EQ(recorder.depth(), 0u);
}

TEST(GraphRecorder, ChecksumsEveryTokenRowAtItsPosition) {
  ComputeBrick rows(RowsOp{}, {Finite{}}, Backend::Scalar);
  RowsOp head_op;
  head_op.label = "head";
  ComputeBrick head(head_op, {Finite{}}, Backend::Scalar);
  std::vector<float> x(12, 0.5f), out(12), last(4);
  RowsOp::Input batch{x, 3};
  const RowsOp::Input head_in{std::span<const float>(out).last(4), 1};
  std::span<float> out_view(out);
  BrickLayer layer("blk.0"), tail("head");
  layer.add(rows, batch, &out_view);
  tail.add(head, head_in, last);

  GraphRecorder recorder({.record_checksums = true});
  recorder.on_tokens(5, 3);  // a batch at positions 5, 6, 7
  ASSERT_TRUE(layer.run(&recorder, 0).has_value());
  ASSERT_TRUE(tail.run(&recorder, 2).has_value());
  const ChecksumLog& log = recorder.checksums();
  ASSERT_EQ(log.size(), 4u);
  for (std::size_t t = 0; t < 3; ++t) {
    EXPECT_EQ(log[t].key(), (ChecksumKey{"rows", 0, static_cast<std::int64_t>(5 + t), 0}));
    EXPECT_EQ(log[t].summary.count, 4u);
    EXPECT_DOUBLE_EQ(log[t].summary.sum, 6.0);
  }
  EXPECT_EQ(log[3].key(), (ChecksumKey{"head", 2, 7, 0}));  // one token: the batch's last

  GraphRecorder unannounced({.record_checksums = true});
  ASSERT_TRUE(layer.run(&unannounced, 0).has_value());
  ASSERT_EQ(unannounced.checksums().size(), 1u);
  EXPECT_EQ(unannounced.checksums()[0].key(), (ChecksumKey{"rows", 0, -1, 0}));
  EXPECT_EQ(unannounced.checksums()[0].summary.count, 12u);
}

TEST(GraphRecorder, AFaultChangesOneRowOfOneKernelForOneBackendAndTheNextBricksSeeIt) {
  ComputeBrick first(RowsOp{}, {Finite{}}, Backend::Scalar);
  RowsOp second_op;
  second_op.label = "second";
  ComputeBrick second(second_op, {Finite{}}, Backend::Scalar);
  std::vector<float> x(8, 0.0f), mid(8), out(8);
  const RowsOp::Input in{x, 2}, mid_in{mid, 2};
  BrickLayer layer("blk.1");
  layer.add(first, in, mid).add(second, mid_in, out);

  GraphRecorder other_backend({.faults = {KernelFault{"rows", 1, 4, Backend::Avx2, 1.0f}}});
  other_backend.on_tokens(3, 2);
  ASSERT_TRUE(layer.run(&other_backend, 1).has_value());
  EXPECT_EQ(other_backend.faults_injected(), 0u);
  EXPECT_EQ(out, std::vector<float>(8, 2.0f));

  GraphRecorder faulty({.record_checksums = true, .faults = {KernelFault{"rows", 1, 4, Backend::Scalar, 1.0f}}});
  faulty.on_tokens(3, 2);
  ASSERT_TRUE(layer.run(&faulty, 1).has_value());
  EXPECT_EQ(faulty.faults_injected(), 1u);
  EXPECT_EQ(mid, (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2}));  // position 4 is the second row
  EXPECT_EQ(out, (std::vector<float>{2, 2, 2, 2, 3, 3, 3, 3}));
  EXPECT_DOUBLE_EQ(faulty.checksums()[1].summary.sum, 8.0);  // the checksum sees the fault
}

TEST(GraphRecorder, ABrickNameWithTheNameSeparatorsKeepsItsOtherCharacters) {
  GraphRecorder recorder;
  recorder.on_brick_begin(BrickId::COUNT, "q#1@x");
  recorder.on_brick_end(BrickId::COUNT, "q#1@x", nullptr);
  EXPECT_EQ(recorder.graph().node(0).label, "q_1_x");
}

TEST(GraphRecorder, AProfilerWithGraphCaptureDrivesIt) {
  ComputeBrick scale(ScaleOp{}, {Finite{}}, Backend::Scalar);
  const std::vector<float> x(16, 1.0f);
  std::vector<float> out(16);
  const ScaleOp::Input in{x};
  BrickLayer layer("l");
  layer.add(scale, in, out);
  BrickProfiler profiler;
  ProfilingObserver observer(profiler);
  GraphRecorder recorder({.record_checksums = true});
  profiler.enable_graph(recorder);
  EXPECT_EQ(profiler.graph(), &recorder);
  ASSERT_TRUE(layer.run(&observer, 0).has_value());
  observer.on_tokens(0, 1);
  ASSERT_TRUE(layer.run(&observer, 1).has_value());
  profiler.disable_graph();
  ASSERT_TRUE(layer.run(&observer, 2).has_value());
  EXPECT_EQ(recorder.graph().size(), 4u);  // two layers of one brick
  EXPECT_EQ(recorder.checksums().size(), 2u);
  EXPECT_EQ(recorder.checksums()[1].position, 0);
  EXPECT_EQ(profiler.brick_stats(BrickId::Activation).count, 3u);
}

}  // namespace
}  // namespace brick::graph
