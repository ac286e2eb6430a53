#include "brick/graph/execution_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "brick/core/error.hpp"
#include "profile/utf8.hpp"

namespace brick::graph {
namespace {

constexpr std::array<std::string_view, kNodeKinds.size()> kNodeKindNames = {"layer",    "brick", "kernel",
                                                                           "transfer", "sync",  "scope"};
constexpr std::array<std::string_view, kEdgeKinds.size()> kEdgeKindNames = {"contains", "sequence", "depends_on",
                                                                           "launches"};

template <class Kind, std::size_t N>
std::optional<Kind> parse_kind(std::string_view text, const std::array<std::string_view, N>& names) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

bool is_parent_edge(EdgeKind kind) noexcept { return kind == EdgeKind::Contains || kind == EdgeKind::Launches; }

}  // namespace

std::string_view name(NodeKind kind) noexcept {
  const auto i = static_cast<std::size_t>(kind);
  return i < kNodeKindNames.size() ? kNodeKindNames[i] : "unknown";
}

std::string_view name(EdgeKind kind) noexcept {
  const auto i = static_cast<std::size_t>(kind);
  return i < kEdgeKindNames.size() ? kEdgeKindNames[i] : "unknown";
}

std::optional<NodeKind> parse_node_kind(std::string_view text) noexcept {
  return parse_kind<NodeKind>(text, kNodeKindNames);
}

std::optional<EdgeKind> parse_edge_kind(std::string_view text) noexcept {
  return parse_kind<EdgeKind>(text, kEdgeKindNames);
}

ExecutionGraph::ExecutionGraph(std::size_t node_limit) : node_limit_(node_limit) {
  if (node_limit == 0 || node_limit > kNoNode) {
    throw InvalidArgument(fmt::format("ExecutionGraph: a limit of {} nodes; it must be 1..{}", node_limit, kNoNode));
  }
}

ExecutionGraph::ExecutionGraph(ExecutionGraph&&) noexcept = default;
ExecutionGraph& ExecutionGraph::operator=(ExecutionGraph&&) noexcept = default;
ExecutionGraph::~ExecutionGraph() = default;

std::uint32_t ExecutionGraph::intern(std::string_view text) {
  const auto it = string_ids_.find(text);
  if (it != string_ids_.end()) return it->second;
  detail::require_utf8(text, "ExecutionGraph: a node's text");
  const auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.emplace_back(text);
  labels_.push_back(false);
  string_ids_.emplace(strings_.back(), id);
  return id;
}

std::uint32_t ExecutionGraph::intern_label(std::string_view label) {
  if (const auto it = string_ids_.find(label); it != string_ids_.end() && labels_[it->second]) return it->second;
  if (label.empty()) throw InvalidArgument("ExecutionGraph::add_node: a node needs a label");
  if (std::any_of(label.begin(), label.end(), [](char c) { return c == '@' || c == '#'; })) {
    throw InvalidArgument(
        fmt::format("ExecutionGraph::add_node: the label '{}' has '@' or '#', which unique node names use", label));
  }
  const std::uint32_t id = intern(label);
  labels_[id] = true;
  return id;
}

std::string_view ExecutionGraph::interned(std::string_view text) {
  return text.empty() ? std::string_view() : std::string_view(strings_[intern(text)]);
}

NodeId ExecutionGraph::add_node(const Node& node) {
  if (static_cast<std::size_t>(node.kind) >= kNodeKinds.size() ||
      static_cast<std::size_t>(node.direction) > static_cast<std::size_t>(TransferDirection::HostCopy)) {
    throw InvalidArgument(fmt::format("ExecutionGraph::add_node: kind {} or direction {} is outside its enum",
                                      static_cast<int>(node.kind), static_cast<int>(node.direction)));
  }
  if (nodes_.size() >= node_limit_) {
    ++dropped_;
    return kNoNode;
  }
  Node stored = node;
  const std::uint64_t label_id = intern_label(node.label);
  stored.label = strings_[label_id];
  stored.source = interned(node.source);
  stored.destination = interned(node.destination);
  stored.waits_for = interned(node.waits_for);
  stored.call = calls_[label_id << 32 | static_cast<std::uint32_t>(node.layer)]++;
  nodes_.push_back(stored);
  node_edges_.emplace_back();
  return static_cast<NodeId>(nodes_.size() - 1);
}

void ExecutionGraph::require_node(NodeId id, const char* what) const {
  if (id >= nodes_.size()) {
    throw InvalidArgument(fmt::format("ExecutionGraph::{}: {} is not a node (the graph has {})", what, id,
                                      nodes_.size()));
  }
}

void ExecutionGraph::add_edge(NodeId from, NodeId to, EdgeKind kind) {
  if (from == kNoNode || to == kNoNode) return;
  require_node(from, "add_edge");
  require_node(to, "add_edge");
  if (from == to) throw InvalidArgument(fmt::format("ExecutionGraph::add_edge: {} to itself", name(from)));
  if (static_cast<std::size_t>(kind) >= kEdgeKinds.size()) {
    throw InvalidArgument(fmt::format("ExecutionGraph::add_edge: {} is not an EdgeKind", static_cast<int>(kind)));
  }
  const auto edge = static_cast<std::uint32_t>(edges_.size());
  edges_.push_back({from, to, kind});
  links_.emplace_back();
  NodeEdges& source = node_edges_[from];
  if (source.last_out == kNoEdge) {
    source.first_out = edge;
  } else {
    links_[source.last_out].next_out = edge;
  }
  source.last_out = edge;
  NodeEdges& target = node_edges_[to];
  if (target.last_in == kNoEdge) {
    target.first_in = edge;
  } else {
    links_[target.last_in].next_in = edge;
  }
  target.last_in = edge;
}

void ExecutionGraph::set_end(NodeId id, std::uint64_t end_ns) {
  require_node(id, "set_end");
  Node& node = nodes_[id];
  node.duration_ns = end_ns > node.start_ns ? end_ns - node.start_ns : 0;
}

void ExecutionGraph::set_work(NodeId id, std::uint64_t elements, double flops, double bytes) {
  require_node(id, "set_work");
  nodes_[id].elements = elements;
  nodes_[id].flops = flops;
  nodes_[id].bytes = bytes;
}

void ExecutionGraph::set_backend(NodeId id, Backend backend) {
  require_node(id, "set_backend");
  nodes_[id].backend = backend;
}

const Node& ExecutionGraph::node(NodeId id) const {
  require_node(id, "node");
  return nodes_[id];
}

std::string ExecutionGraph::name(NodeId id) const {
  const Node& n = node(id);
  return n.layer >= 0 ? fmt::format("{}@{}#{}", n.label, n.layer, n.call) : fmt::format("{}#{}", n.label, n.call);
}

std::optional<NodeId> ExecutionGraph::find(std::string_view unique_name) const {
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    if (unique_name.starts_with(nodes_[id].label) && name(id) == unique_name) return id;
  }
  return std::nullopt;
}

ExecutionGraph::EdgeRange ExecutionGraph::out_edges(NodeId id) const {
  require_node(id, "out_edges");
  return {this, node_edges_[id].first_out, true};
}

ExecutionGraph::EdgeRange ExecutionGraph::in_edges(NodeId id) const {
  require_node(id, "in_edges");
  return {this, node_edges_[id].first_in, false};
}

std::vector<NodeId> ExecutionGraph::children(NodeId id) const {
  std::vector<NodeId> result;
  for (const Edge& edge : out_edges(id)) {
    if (is_parent_edge(edge.kind)) result.push_back(edge.to);
  }
  return result;
}

std::optional<NodeId> ExecutionGraph::parent(NodeId id) const {
  for (const Edge& edge : in_edges(id)) {
    if (is_parent_edge(edge.kind)) return edge.from;
  }
  return std::nullopt;
}

std::vector<NodeId> ExecutionGraph::roots() const {
  std::vector<NodeId> result;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    if (!parent(id)) result.push_back(id);
  }
  return result;
}

void ExecutionGraph::clear() {
  dropped_ = 0;
  nodes_.clear();
  node_edges_.clear();
  edges_.clear();
  links_.clear();
  strings_.clear();
  labels_.clear();
  string_ids_.clear();
  calls_.clear();
}

}  // namespace brick::graph
