#pragma once
// GraphRecorder: records a real run into an ExecutionGraph and, on request, a ChecksumLog.
//
// It is a LayerObserver: pass it to a BrickLayer, a LlamaDecoder or a Generator directly, or turn
// graph capture on in a profiler (BrickProfiler::enable_graph(recorder)) so that a
// ProfilingObserver drives it. It is also a KernelRecorder (core/kernel_recorder.hpp): while a node
// is open it is the calling thread's recorder, so the inner kernels of every brick (activation
// quantization, each mat-vec's parallel pass and its pieces on the pool's threads, the pool's join,
// KV-cache writes) land under their brick.
//
// Structure. A scope stack places every node: a layer, a brick, a user scope (begin_scope) or a
// kernel stays open until it ends, and what begins meanwhile is its child (Contains; Launches for a
// kernel or transfer of a brick or kernel). Consecutive children of one parent on the recording
// thread are linked by Sequence edges, and so are consecutive top-level nodes. A parallel pass gets
// one Kernel node per piece (thread 0 for the caller's, the slot for a worker's), a Sync node for
// the join, and a DependsOn edge from each worker's piece to the join.
//
// Checksums (options.record_checksums): every brick output, one checksum per token row, keyed by
// the brick's name, the layer index and the token's position (LayerObserver::on_tokens; -1 and the
// whole output when no positions were announced). Faults (options.faults) change an output row
// before it is checksummed.
//
// One thread records (the one that runs the layers); the recorder is not thread-safe. Misuse:
// ending a layer, brick or scope that is not the innermost open node, or beginning a layer inside
// an open brick (left open when an exception escaped a run: call reset()), is a StateError; a
// kernel hook that cannot be placed (a kernel_end without its begin, no memory) is only counted,
// since kernels must not throw.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "brick/core/kernel_recorder.hpp"
#include "brick/core/layer_observer.hpp"
#include "brick/graph/execution_graph.hpp"
#include "brick/graph/kernel_checksum.hpp"
#include "brick/graph/kernel_fault.hpp"

namespace brick::graph {

struct GraphRecorderOptions {
  bool record_nodes = true;
  std::size_t node_limit = ExecutionGraph::kDefaultNodeLimit;
  bool record_checksums = false;
  std::size_t checksum_limit = ChecksumLog::kDefaultLimit;
  std::vector<KernelFault> faults = {};
};

class GraphRecorder final : public LayerObserver, public KernelRecorder {
 public:
  // InvalidArgument for a node limit ExecutionGraph refuses.
  explicit GraphRecorder(GraphRecorderOptions options = {});
  // Stops being the calling thread's kernel recorder if it still is.
  ~GraphRecorder() override;
  GraphRecorder(const GraphRecorder&) = delete;
  GraphRecorder& operator=(const GraphRecorder&) = delete;

  void on_layer_begin(std::size_t layer_index) override;
  void on_layer_end() override;
  void on_tokens(std::size_t first_position, std::size_t count) override;
  void on_brick_begin(BrickId id, std::string_view name) override;
  void on_brick_output(const RunReport& report, std::span<float> output) override;
  void on_brick_end(BrickId id, std::string_view name, const RunReport* report) override;

  void kernel_begin(std::string_view name, Backend backend, std::uint64_t start_ns) noexcept override;
  void kernel_end(const KernelWork& work, std::uint64_t end_ns) noexcept override;
  void transfer(const TransferRecord& transfer) noexcept override;
  void parallel_call(const ParallelCall& call) noexcept override;

  // A region of the user's (label: as add_node takes it); scopes nest with everything else.
  void begin_scope(std::string_view label);
  void end_scope();
  // Nodes open now (layers, bricks, scopes, kernels).
  std::size_t depth() const noexcept { return stack_.size(); }

  const ExecutionGraph& graph() const noexcept { return graph_; }
  ExecutionGraph& graph() noexcept { return graph_; }
  const ChecksumLog& checksums() const noexcept { return checksums_; }
  const GraphRecorderOptions& options() const noexcept { return options_; }
  std::uint64_t faults_injected() const noexcept { return faults_injected_; }
  std::uint64_t unplaced_kernel_events() const noexcept { return unplaced_; }

  // Empties the graph and the log, closes every open node, stops being the thread's recorder.
  void reset();

 private:
  struct Frame {
    NodeId node;
    NodeKind kind;
    std::string_view label;  // the node's label (the graph's storage)
    std::int32_t layer;
    Backend backend;
    NodeId last_child = kNoNode;  // on the recording thread, for Sequence edges
  };
  struct PairHash {
    template <class Second>
    std::size_t operator()(const std::pair<const void*, Second>& key) const noexcept;
  };

  NodeId open(const Node& node);
  NodeId add_child(const Node& node, bool on_this_thread);
  void close(NodeKind kind, const char* what);
  [[noreturn]] void mismatch(NodeKind expected, const char* what) const;
  std::string_view child_label(std::string_view name);
  std::string_view slot_label(std::size_t slot);
  std::int32_t current_layer() const noexcept;

  GraphRecorderOptions options_;
  ExecutionGraph graph_;
  ChecksumLog checksums_;
  std::vector<Frame> stack_;
  NodeId last_root_ = kNoNode;
  KernelRecorder* replaced_ = nullptr;  // the thread's recorder before this one was installed
  bool installed_ = false;
  std::size_t first_position_ = 0;
  std::size_t token_count_ = 0;  // 0: no positions announced
  std::uint64_t faults_injected_ = 0;
  std::uint64_t unplaced_ = 0;
  // Labels of children ("<parent>/<name>", "<parent>/slot 3"), keyed by the parent label's storage
  // and the name's (kernel names are string literals or kernel table entries: their addresses
  // identify them) or the slot.
  std::unordered_map<std::pair<const void*, const void*>, std::string, PairHash> child_labels_;
  std::unordered_map<std::pair<const void*, std::size_t>, std::string, PairHash> slot_labels_;
  // The pieces of parallel calls made by the open brick itself, which learn its backend at its end.
  std::vector<NodeId> pieces_of_brick_;
  std::unordered_map<std::size_t, std::string> layer_labels_;
};

// Holds a user scope open for its lifetime. If what ran inside it left nodes open (an exception
// escaped a layer), the scope stays open too, for reset() to clear.
class GraphScope {
 public:
  GraphScope(GraphRecorder& recorder, std::string_view label) : recorder_(recorder) {
    recorder_.begin_scope(label);
    depth_ = recorder_.depth();
  }
  ~GraphScope() {
    if (recorder_.depth() == depth_) recorder_.end_scope();
  }
  GraphScope(const GraphScope&) = delete;
  GraphScope& operator=(const GraphScope&) = delete;

 private:
  GraphRecorder& recorder_;
  std::size_t depth_;
};

}  // namespace brick::graph
