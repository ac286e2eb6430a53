#pragma once
// ExecutionGraph: the execution path of a run as nodes (layers, bricks, kernels, transfers, syncs,
// user scopes) and typed edges between them (node.hpp). A GraphRecorder (graph_recorder.hpp) builds
// one from a real run; tests and tools can build one by hand.
//
// Names. Every node is named "<label>@<layer>#<call>" ("<label>#<call>" outside a layer), where
// call counts the earlier nodes with the same label and layer, so names are unique per instance.
// Labels therefore may not contain '@' or '#'.
//
// Bounds. The graph holds at most node_limit() nodes; add_node() past it returns kNoNode and
// counts the node in dropped_nodes(), and edges to kNoNode are not added.
//
// Queries (children, parent, in and out edges) are O(degree): each node keeps its own edge lists.
// The graph is move-only (its nodes view its own string storage, which a move keeps in place).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "brick/graph/node.hpp"

namespace brick::graph {

class ExecutionGraph {
 public:
  static constexpr std::size_t kDefaultNodeLimit = std::size_t{1} << 20;

  // InvalidArgument for a limit of 0 or above kNoNode.
  explicit ExecutionGraph(std::size_t node_limit = kDefaultNodeLimit);
  ExecutionGraph(ExecutionGraph&&) noexcept;
  ExecutionGraph& operator=(ExecutionGraph&&) noexcept;
  ExecutionGraph(const ExecutionGraph&) = delete;
  ExecutionGraph& operator=(const ExecutionGraph&) = delete;
  ~ExecutionGraph();

  // Adds `node` with its strings copied in and its call number assigned (node.call is ignored).
  // InvalidArgument for a kind or direction outside its enum, an empty label, a label with '@' or
  // '#', or a string that is not UTF-8. Past the limit: kNoNode, and the node is counted as dropped.
  NodeId add_node(const Node& node);
  // InvalidArgument for an id that is not a node (kNoNode excepted: an edge of a dropped node is
  // not added), an edge from a node to itself, or a kind outside EdgeKind.
  void add_edge(NodeId from, NodeId to, EdgeKind kind);

  // The parts of a node known only once it has run (the recorder opens nodes before that).
  // InvalidArgument for an id that is not a node.
  void set_end(NodeId id, std::uint64_t end_ns);
  void set_work(NodeId id, std::uint64_t elements, double flops, double bytes);
  void set_backend(NodeId id, Backend backend);

  std::size_t size() const noexcept { return nodes_.size(); }
  std::size_t edge_count() const noexcept { return edges_.size(); }
  std::size_t node_limit() const noexcept { return node_limit_; }
  std::uint64_t dropped_nodes() const noexcept { return dropped_; }

  // InvalidArgument for an id that is not a node.
  const Node& node(NodeId id) const;
  std::string name(NodeId id) const;
  // The node with this unique name; O(nodes).
  std::optional<NodeId> find(std::string_view unique_name) const;
  std::span<const Edge> edges() const noexcept { return edges_; }

  // A node's outgoing or incoming edges in the order they were added, O(degree), no allocation.
  class EdgeRange {
   public:
    class iterator {
     public:
      using value_type = Edge;
      using difference_type = std::ptrdiff_t;
      iterator() = default;
      const Edge& operator*() const noexcept { return graph_->edges_[edge_]; }
      const Edge* operator->() const noexcept { return &graph_->edges_[edge_]; }
      iterator& operator++() noexcept {
        edge_ = outgoing_ ? graph_->links_[edge_].next_out : graph_->links_[edge_].next_in;
        return *this;
      }
      iterator operator++(int) noexcept {
        iterator before = *this;
        ++*this;
        return before;
      }
      bool operator==(const iterator& other) const noexcept { return edge_ == other.edge_; }

     private:
      friend class EdgeRange;
      iterator(const ExecutionGraph* graph, std::uint32_t edge, bool outgoing) noexcept
          : graph_(graph), edge_(edge), outgoing_(outgoing) {}
      const ExecutionGraph* graph_ = nullptr;
      std::uint32_t edge_ = kNoEdge;
      bool outgoing_ = true;
    };
    iterator begin() const noexcept { return {graph_, first_, outgoing_}; }
    iterator end() const noexcept { return {graph_, kNoEdge, outgoing_}; }
    bool empty() const noexcept { return first_ == kNoEdge; }

   private:
    friend class ExecutionGraph;
    EdgeRange(const ExecutionGraph* graph, std::uint32_t first, bool outgoing) noexcept
        : graph_(graph), first_(first), outgoing_(outgoing) {}
    const ExecutionGraph* graph_;
    std::uint32_t first_;
    bool outgoing_;
  };

  // InvalidArgument for an id that is not a node.
  EdgeRange out_edges(NodeId id) const;
  EdgeRange in_edges(NodeId id) const;
  // What ran inside `id` (the targets of its Contains and Launches edges), in the order added.
  std::vector<NodeId> children(NodeId id) const;
  // The node `id` ran inside (the source of its Contains or Launches edge), if any.
  std::optional<NodeId> parent(NodeId id) const;
  // The nodes without a parent, in id order; O(nodes).
  std::vector<NodeId> roots() const;

  // Counts nodes dropped where the graph was recorded (one read from a file says how many).
  void add_dropped(std::uint64_t nodes) noexcept { dropped_ += nodes; }
  // Forgets every node, edge and dropped count; keeps the limit.
  void clear();

 private:
  static constexpr std::uint32_t kNoEdge = 0xFFFFFFFFu;
  struct Links {
    std::uint32_t next_out = kNoEdge;
    std::uint32_t next_in = kNoEdge;
  };
  struct NodeEdges {
    std::uint32_t first_out = kNoEdge, last_out = kNoEdge;
    std::uint32_t first_in = kNoEdge, last_in = kNoEdge;
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };

  // The id of `text` in strings_, added on first use (InvalidArgument unless it is UTF-8).
  std::uint32_t intern(std::string_view text);
  // The same for a label, checked once: InvalidArgument for an empty one or one with '@' or '#'.
  std::uint32_t intern_label(std::string_view label);
  std::string_view interned(std::string_view text);
  void require_node(NodeId id, const char* what) const;

  std::size_t node_limit_;
  std::uint64_t dropped_ = 0;
  std::vector<Node> nodes_;
  std::vector<NodeEdges> node_edges_;
  std::vector<Edge> edges_;
  std::vector<Links> links_;
  std::deque<std::string> strings_;  // stable addresses: nodes view them
  std::vector<bool> labels_;         // per string: checked as a label
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> string_ids_;
  // Calls so far per (label id, layer).
  std::unordered_map<std::uint64_t, std::uint32_t> calls_;
};

}  // namespace brick::graph
