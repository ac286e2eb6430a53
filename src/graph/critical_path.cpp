#include "brick/graph/critical_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <numeric>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

// Three events per node: its start, the end of its children (of its own duration, for a node
// without children), and its end.
std::size_t start_of(NodeId v) noexcept { return 3 * std::size_t{v}; }
std::size_t middle_of(NodeId v) noexcept { return 3 * std::size_t{v} + 1; }
std::size_t end_of(NodeId v) noexcept { return 3 * std::size_t{v} + 2; }

bool orders(EdgeKind kind) noexcept { return kind == EdgeKind::Sequence || kind == EdgeKind::DependsOn; }

// Where an ordering edge into `to` arrives: its start, or a Sync's end under DependsOn.
bool holds_end(const ExecutionGraph& graph, const Edge& edge) {
  return edge.kind == EdgeKind::DependsOn && graph.node(edge.to).kind == NodeKind::Sync;
}

struct Tree {
  std::vector<NodeId> parent;                 // kNoNode for a root
  std::vector<std::vector<NodeId>> children;  // by the parent above
  std::vector<NodeId> post_order;             // children before their parents
};

Tree build_tree(const ExecutionGraph& graph) {
  const std::size_t n = graph.size();
  Tree tree{std::vector<NodeId>(n, kNoNode), std::vector<std::vector<NodeId>>(n), {}};
  for (NodeId v = 0; v < n; ++v) {
    if (const auto parent = graph.parent(v)) {
      tree.parent[v] = *parent;
      tree.children[*parent].push_back(v);
    }
  }
  // Iterative post-order from the roots; a node never reached sits on a cycle of parent edges.
  std::vector<bool> visited(n, false);
  for (NodeId root = 0; root < n; ++root) {
    if (tree.parent[root] != kNoNode) continue;
    std::vector<std::pair<NodeId, std::size_t>> stack{{root, 0}};
    visited[root] = true;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next < tree.children[v].size()) {
        const NodeId child = tree.children[v][next++];
        visited[child] = true;
        stack.push_back({child, 0});
      } else {
        tree.post_order.push_back(v);
        stack.pop_back();
      }
    }
  }
  for (NodeId v = 0; v < n; ++v) {
    if (!visited[v]) throw StateError(fmt::format("critical_path: {} is on a cycle of parent edges", graph.name(v)));
  }
  return tree;
}

// The longest path through the children of `parent`, each taking `rolled[c]`, ordered by the
// edges among them.
std::uint64_t children_path(const ExecutionGraph& graph, const Tree& tree, NodeId parent,
                            const std::vector<std::uint64_t>& rolled) {
  const std::vector<NodeId>& kids = tree.children[parent];
  std::vector<std::uint64_t> start(kids.size(), 0), finish(kids.size(), 0);
  std::vector<std::size_t> waiting(kids.size(), 0);
  const auto local = [&](NodeId v) {
    return static_cast<std::size_t>(std::lower_bound(kids.begin(), kids.end(), v) - kids.begin());
  };
  const auto sibling = [&](const Edge& e) { return orders(e.kind) && tree.parent[e.from] == parent; };
  for (std::size_t i = 0; i < kids.size(); ++i) {
    for (const Edge& e : graph.in_edges(kids[i])) waiting[i] += sibling(e) ? 1 : 0;
  }
  // Kahn's order over the children; the finish of one with a held-back end is settled with it.
  std::deque<std::size_t> ready;
  for (std::size_t i = 0; i < kids.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  std::uint64_t longest = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.front();
    ready.pop_front();
    ++done;
    finish[i] = std::max(finish[i], start[i] + rolled[kids[i]]);
    longest = std::max(longest, finish[i]);
    for (const Edge& e : graph.out_edges(kids[i])) {
      if (!sibling(e)) continue;
      const std::size_t j = local(e.to);
      if (holds_end(graph, e)) {
        finish[j] = std::max(finish[j], finish[i]);
      } else {
        start[j] = std::max(start[j], finish[i]);
      }
      if (--waiting[j] == 0) ready.push_back(j);
    }
  }
  if (done != kids.size()) {
    for (std::size_t i = 0; i < kids.size(); ++i) {
      if (waiting[i] > 0) {
        throw StateError(fmt::format("critical_path: {} is on a cycle of Sequence or DependsOn edges",
                                     graph.name(kids[i])));
      }
    }
  }
  return longest;
}

}  // namespace

CriticalPath critical_path(const ExecutionGraph& graph) {
  const std::size_t n = graph.size();
  CriticalPath path;
  path.own_ns.assign(n, 0);
  path.slack_ns.assign(n, 0);
  if (n == 0) return path;
  const Tree tree = build_tree(graph);

  // Each node's rolled-up time, children first; a parent's own time is what it measured beyond its
  // children's longest path.
  std::vector<std::uint64_t> rolled(n, 0);
  for (const NodeId v : tree.post_order) {
    const std::uint64_t duration = graph.node(v).duration_ns;
    if (tree.children[v].empty()) {
      rolled[v] = duration;
      path.own_ns[v] = duration;
    } else {
      const std::uint64_t inside = children_path(graph, tree, v, rolled);
      rolled[v] = std::max(duration, inside);
      path.own_ns[v] = rolled[v] - inside;
    }
  }

  // The event graph: start -> middle (a leaf's duration), middle -> end (a parent's own time),
  // start -> each child's start, each child's end -> middle, and the ordering edges.
  const std::size_t events = 3 * n;
  std::vector<std::vector<std::size_t>> next(events);
  for (NodeId v = 0; v < n; ++v) {
    next[start_of(v)].push_back(middle_of(v));
    next[middle_of(v)].push_back(end_of(v));
    if (tree.parent[v] != kNoNode) {
      next[start_of(tree.parent[v])].push_back(start_of(v));
      next[end_of(v)].push_back(middle_of(tree.parent[v]));
    }
    for (const Edge& e : graph.out_edges(v)) {
      if (orders(e.kind)) next[end_of(v)].push_back(holds_end(graph, e) ? end_of(e.to) : start_of(e.to));
    }
  }
  const auto weight = [&](std::size_t from, std::size_t to) -> std::uint64_t {
    const auto v = static_cast<NodeId>(from / 3);
    if (from % 3 == 0 && to == middle_of(v)) return tree.children[v].empty() ? path.own_ns[v] : 0;
    if (from % 3 == 1 && to == end_of(v)) return tree.children[v].empty() ? 0 : path.own_ns[v];
    return 0;
  };

  std::vector<std::size_t> waiting(events, 0);
  for (const auto& targets : next) {
    for (const std::size_t t : targets) ++waiting[t];
  }
  std::vector<std::size_t> order;
  order.reserve(events);
  std::deque<std::size_t> ready;
  for (std::size_t x = 0; x < events; ++x) {
    if (waiting[x] == 0) ready.push_back(x);
  }
  std::vector<std::uint64_t> earliest(events, 0);
  std::vector<std::size_t> previous(events, events);
  while (!ready.empty()) {
    const std::size_t x = ready.front();
    ready.pop_front();
    order.push_back(x);
    for (const std::size_t y : next[x]) {
      const std::uint64_t arrive = earliest[x] + weight(x, y);
      if (previous[y] == events || arrive > earliest[y]) {
        earliest[y] = arrive;
        previous[y] = x;
      }
      if (--waiting[y] == 0) ready.push_back(y);
    }
  }
  if (order.size() != events) {
    for (std::size_t x = 0; x < events; ++x) {
      if (waiting[x] > 0) {
        throw StateError(fmt::format("critical_path: {} is on a cycle of ordering and parent edges",
                                     graph.name(static_cast<NodeId>(x / 3))));
      }
    }
  }

  std::size_t sink = 0;
  for (std::size_t x = 1; x < events; ++x) {
    if (earliest[x] > earliest[sink]) sink = x;
  }
  path.length_ns = earliest[sink];
  for (std::size_t x = sink; previous[x] != events; x = previous[x]) {
    const std::size_t from = previous[x];
    const auto v = static_cast<NodeId>(from / 3);
    const bool leaf_step = from % 3 == 0 && x == middle_of(v) && tree.children[v].empty();
    const bool own_step = from % 3 == 1 && x == end_of(v) && !tree.children[v].empty() && path.own_ns[v] > 0;
    if (leaf_step || own_step) path.nodes.push_back(v);
  }
  std::reverse(path.nodes.begin(), path.nodes.end());

  // The longest path from each event to the end, for the slack: length minus the longest path
  // through the node's start.
  std::vector<std::uint64_t> remaining(events, 0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (const std::size_t y : next[*it]) remaining[*it] = std::max(remaining[*it], weight(*it, y) + remaining[y]);
  }
  for (NodeId v = 0; v < n; ++v) {
    const std::uint64_t through = earliest[start_of(v)] + remaining[start_of(v)];
    path.slack_ns[v] = path.length_ns > through ? path.length_ns - through : 0;
  }
  return path;
}

std::vector<NodeId> slowest_kernels(const ExecutionGraph& graph, std::size_t count) {
  std::vector<NodeId> kernels;
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (graph.node(v).kind == NodeKind::Kernel) kernels.push_back(v);
  }
  const auto slower = [&](NodeId a, NodeId b) {
    const std::uint64_t da = graph.node(a).duration_ns, db = graph.node(b).duration_ns;
    return da != db ? da > db : a < b;
  };
  count = std::min(count, kernels.size());
  std::partial_sort(kernels.begin(), kernels.begin() + static_cast<std::ptrdiff_t>(count), kernels.end(), slower);
  kernels.resize(count);
  return kernels;
}

std::string describe(const ExecutionGraph& graph, const CriticalPath& path, const std::optional<MachinePeaks>& peaks,
                     std::size_t rows) {
  std::string text = fmt::format("critical path: {:.3f} ms through {} of {} nodes", path.length_ns / 1e6,
                                 path.nodes.size(), graph.size());
  if (graph.dropped_nodes() > 0) {
    text += fmt::format(" ({} more nodes dropped past the limit of {})", graph.dropped_nodes(), graph.node_limit());
  }
  text += "\n";
  std::vector<NodeId> longest = path.nodes;
  std::stable_sort(longest.begin(), longest.end(),
                   [&](NodeId a, NodeId b) { return path.own_ns[a] > path.own_ns[b]; });
  longest.resize(std::min(rows, longest.size()));
  const auto roof = [&](NodeId v) -> std::string {
    const Node& node = graph.node(v);
    if (!peaks || (node.kind != NodeKind::Kernel && node.kind != NodeKind::Brick && node.kind != NodeKind::Transfer)) {
      return "";
    }
    return describe(roofline(node, *peaks));
  };
  text += fmt::format("  {:<48} {:>8} {:>12} {:>7}  {}\n", "on the path (longest first)", "kind", "us", "share",
                      peaks ? "roofline" : "");
  for (const NodeId v : longest) {
    const double share = path.length_ns > 0 ? 100.0 * static_cast<double>(path.own_ns[v]) / path.length_ns : 0.0;
    text += fmt::format("  {:<48} {:>8} {:>12.3f} {:>6.1f}%  {}\n", graph.name(v), name(graph.node(v).kind),
                        path.own_ns[v] / 1e3, share, roof(v));
  }
  std::vector<NodeId> near;
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (graph.node(v).kind == NodeKind::Kernel && path.slack_ns[v] > 0) near.push_back(v);
  }
  std::stable_sort(near.begin(), near.end(), [&](NodeId a, NodeId b) { return path.slack_ns[a] < path.slack_ns[b]; });
  near.resize(std::min(rows, near.size()));
  if (!near.empty()) {
    text += fmt::format("  {:<48} {:>8} {:>12} {:>12}  {}\n", "off the path (least slack first)", "kind", "us",
                        "slack us", peaks ? "roofline" : "");
    for (const NodeId v : near) {
      text += fmt::format("  {:<48} {:>8} {:>12.3f} {:>12.3f}  {}\n", graph.name(v), name(graph.node(v).kind),
                          graph.node(v).duration_ns / 1e3, path.slack_ns[v] / 1e3, roof(v));
    }
  }
  return text;
}

}  // namespace brick::graph
