#pragma once
// The nodes and edges of an ExecutionGraph (execution_graph.hpp).
//
// Node kinds:
//   Layer     a BrickLayer run (a transformer block, the head, ...)
//   Brick     one ComputeBrick execution
//   Kernel    an inner kernel of a brick: activation quantization, a mat-vec's parallel pass, one
//             slot's piece of that pass, a conversion
//   Transfer  bytes copied without computing on them (a KV-cache write: a host copy)
//   Sync      waiting: a ThreadPool join (the time the caller waited for its workers), a barrier
//   Scope     a region the user named (GraphRecorder::begin_scope)
//
// Edge kinds (from -> to):
//   Contains   a layer or scope to what ran inside it, a kernel to the join it waited in
//   Sequence   temporal order on one thread: `to` started after `from` ended
//   DependsOn  a real dependency: `to` cannot start before `from` ends; into a Sync node, the sync
//              cannot end before `from` ends (a join waits for its workers' pieces)
//   Launches   a brick (or a kernel) to a kernel or transfer it ran
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"
#include "brick/core/kernel_recorder.hpp"

namespace brick::graph {

enum class NodeKind : std::uint8_t { Layer, Brick, Kernel, Transfer, Sync, Scope };
enum class EdgeKind : std::uint8_t { Contains, Sequence, DependsOn, Launches };

inline constexpr std::array<NodeKind, 6> kNodeKinds = {NodeKind::Layer,    NodeKind::Brick, NodeKind::Kernel,
                                                       NodeKind::Transfer, NodeKind::Sync,  NodeKind::Scope};
inline constexpr std::array<EdgeKind, 4> kEdgeKinds = {EdgeKind::Contains, EdgeKind::Sequence, EdgeKind::DependsOn,
                                                       EdgeKind::Launches};

// "layer", "brick", "kernel", "transfer", "sync", "scope"; "contains", "sequence", "depends_on",
// "launches". The parsers take exactly these names.
std::string_view name(NodeKind kind) noexcept;
std::string_view name(EdgeKind kind) noexcept;
std::optional<NodeKind> parse_node_kind(std::string_view text) noexcept;
std::optional<EdgeKind> parse_edge_kind(std::string_view text) noexcept;

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = std::numeric_limits<NodeId>::max();

// A node as the graph holds it. The strings view the graph's own storage (ExecutionGraph::add_node
// copies them in) and stay valid while the graph lives. Fields a kind does not use stay at their
// defaults.
struct Node {
  NodeKind kind = NodeKind::Scope;
  std::string_view label;    // what ran: "blk.0.qkv", "blk.0.qkv/quantize_q8k", "layer 0"
  std::int32_t layer = -1;   // the layer it ran in (the observer's layer index); -1: none
  std::uint32_t call = 0;    // earlier nodes with the same label and layer; set by add_node
  std::uint32_t thread = 0;  // 0: the recording thread; k: the worker of pool slot k
  std::uint64_t start_ns = 0;
  std::uint64_t duration_ns = 0;
  // Brick and Kernel (bytes also Transfer).
  Backend backend = Backend::Scalar;
  BrickId brick = BrickId::COUNT;  // a Brick's id (COUNT: a brick known by name only)
  std::uint64_t elements = 0;      // tokens of a brick, values or rows of a kernel
  double flops = 0.0;
  double bytes = 0.0;  // read plus written
  // Transfer.
  std::string_view source;
  std::string_view destination;
  TransferDirection direction = TransferDirection::HostCopy;
  // Sync: what it waited for.
  std::string_view waits_for;

  std::uint64_t end_ns() const noexcept { return start_ns + duration_ns; }
  // FLOPs per byte; 0 without bytes.
  double arithmetic_intensity() const noexcept { return bytes > 0.0 ? flops / bytes : 0.0; }
  // Achieved rates over duration_ns; 0 without a duration.
  double gflops_per_second() const noexcept {
    return duration_ns > 0 ? flops / static_cast<double>(duration_ns) : 0.0;
  }
  double gb_per_second() const noexcept {
    return duration_ns > 0 ? bytes / static_cast<double>(duration_ns) : 0.0;
  }
};

struct Edge {
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  EdgeKind kind = EdgeKind::Sequence;

  bool operator==(const Edge&) const = default;
};

}  // namespace brick::graph
