#include "brick/graph/graph_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "graph/json_document.hpp"

namespace brick::graph {
namespace {

constexpr std::string_view kFormat = "brick.graph";
constexpr std::int64_t kVersion = 1;
constexpr int kPid = 1;
constexpr std::array<TransferDirection, 4> kDirections = {TransferDirection::HostToDevice,
                                                          TransferDirection::DeviceToHost,
                                                          TransferDirection::DeviceToDevice, TransferDirection::HostCopy};

bool has_roofline(const Node& node) noexcept {
  return node.kind == NodeKind::Kernel || node.kind == NodeKind::Brick || node.kind == NodeKind::Transfer;
}

// What a node did, after its name and kind: "RmsNorm avx2, 4 elements, 4096 FLOP, 16384 B".
std::string details(const Node& node, const ExportOptions& options) {
  std::string text;
  const auto work = [&] {
    return fmt::format("{} elements, {:g} FLOP, {:g} B", node.elements, node.flops, node.bytes);
  };
  switch (node.kind) {
    case NodeKind::Brick:
      text = fmt::format("{} {}, {}", node.brick == BrickId::COUNT ? "named" : name(node.brick), name(node.backend),
                         work());
      break;
    case NodeKind::Kernel:
      text = fmt::format("{}, {}", name(node.backend), work());
      break;
    case NodeKind::Transfer:
      text = fmt::format("{} {} -> {}, {:g} B", name(node.direction), node.source, node.destination, node.bytes);
      break;
    case NodeKind::Sync:
      text = fmt::format("waits for {}", node.waits_for);
      break;
    case NodeKind::Layer:
    case NodeKind::Scope:
      break;
  }
  if (node.thread != 0) text += fmt::format("{}thread {}", text.empty() ? "" : ", ", node.thread);
  if (options.durations) text += fmt::format("{}{:.3f} us", text.empty() ? "" : ", ", node.duration_ns / 1e3);
  if (options.peaks && has_roofline(node)) text += ", " + describe(roofline(node, *options.peaks));
  return text;
}

std::string dot_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string_view dot_style(EdgeKind kind) noexcept {
  switch (kind) {
    case EdgeKind::Contains:
      return "style=dashed, color=gray50";
    case EdgeKind::DependsOn:
      return "style=bold, color=red3";
    case EdgeKind::Launches:
      return "style=dotted, color=blue3";
    case EdgeKind::Sequence:
      break;
  }
  return "style=solid, color=black";
}

std::string_view dot_shape(NodeKind kind) noexcept {
  switch (kind) {
    case NodeKind::Layer:
    case NodeKind::Scope:
      return "folder";
    case NodeKind::Sync:
      return "diamond";
    case NodeKind::Transfer:
      return "cds";
    case NodeKind::Brick:
    case NodeKind::Kernel:
      break;
  }
  return "box";
}

nlohmann::json optional_text(std::string_view text) {
  return text.empty() ? nlohmann::json(nullptr) : nlohmann::json(text);
}

std::string optional_string(const detail::JsonObject& object, std::string_view key) {
  return object.is_null(key) ? std::string() : object.string(key);
}

}  // namespace

std::string to_ascii_tree(const ExecutionGraph& graph, const ExportOptions& options) {
  std::string text = fmt::format("execution graph: {} nodes, {} edges", graph.size(), graph.edge_count());
  if (graph.dropped_nodes() > 0) {
    text += fmt::format(" ({} nodes dropped past the limit of {})", graph.dropped_nodes(), graph.node_limit());
  }
  text += '\n';
  // Depth first, children in the order they were added; the prefix of a node is its ancestors'
  // rails ("|   " while an ancestor has siblings below, else "    ").
  struct Item {
    NodeId node;
    std::string prefix;
    bool last;
    bool root;
  };
  std::vector<Item> stack;
  const std::vector<NodeId> roots = graph.roots();
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, "", false, true});
  while (!stack.empty()) {
    Item item = std::move(stack.back());
    stack.pop_back();
    const Node& node = graph.node(item.node);
    const std::string branch = item.root ? "" : (item.last ? "`-- " : "|-- ");
    const std::string detail = details(node, options);
    text += fmt::format("{}{}{} [{}{}{}]\n", item.prefix, branch, graph.name(item.node), name(node.kind),
                        detail.empty() ? "" : ": ", detail);
    const std::string child_prefix = item.root ? "" : item.prefix + (item.last ? "    " : "|   ");
    const std::vector<NodeId> children = graph.children(item.node);
    for (std::size_t i = children.size(); i-- > 0;) {
      stack.push_back({children[i], child_prefix, i + 1 == children.size(), false});
    }
  }
  return text;
}

std::string to_dot(const ExecutionGraph& graph, const ExportOptions& options) {
  std::string text = "digraph execution {\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  if (graph.dropped_nodes() > 0) {
    text += fmt::format("  // {} nodes dropped past the limit of {}\n", graph.dropped_nodes(), graph.node_limit());
  }
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    const std::string detail = details(node, options);
    text += fmt::format("  n{} [label=\"{}\\n{}{}{}\", shape={}, kind=\"{}\"];\n", v, dot_escape(graph.name(v)),
                        name(node.kind), detail.empty() ? "" : ": ", dot_escape(detail), dot_shape(node.kind),
                        name(node.kind));
  }
  for (const Edge& edge : graph.edges()) {
    text += fmt::format("  n{} -> n{} [{}, kind=\"{}\"];\n", edge.from, edge.to, dot_style(edge.kind), name(edge.kind));
  }
  return text + "}\n";
}

std::string to_json(const ExecutionGraph& graph, const ExportOptions& options) {
  nlohmann::json nodes = nlohmann::json::array();
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    nlohmann::json node = {{"id", v},
                           {"name", graph.name(v)},
                           {"kind", name(n.kind)},
                           {"label", n.label},
                           {"layer", n.layer},
                           {"call", n.call},
                           {"thread", n.thread},
                           {"start_ns", n.start_ns},
                           {"duration_ns", n.duration_ns},
                           {"backend", name(n.backend)},
                           {"brick", n.brick == BrickId::COUNT ? nlohmann::json(nullptr) : nlohmann::json(name(n.brick))},
                           {"elements", n.elements},
                           {"flops", n.flops},
                           {"bytes", n.bytes},
                           {"source", optional_text(n.source)},
                           {"destination", optional_text(n.destination)},
                           {"direction", name(n.direction)},
                           {"waits_for", optional_text(n.waits_for)}};
    if (options.peaks && has_roofline(n)) {
      const Roofline r = roofline(n, *options.peaks);
      node["roofline"] = {{"class", name(r.bound)},
                          {"intensity", r.intensity},
                          {"gflops_per_second", r.gflops_per_second},
                          {"gb_per_second", r.gb_per_second},
                          {"fraction_of_roof", r.fraction_of_roof}};
    }
    nodes.push_back(std::move(node));
  }
  nlohmann::json edges = nlohmann::json::array();
  for (const Edge& e : graph.edges()) edges.push_back({{"from", e.from}, {"to", e.to}, {"kind", name(e.kind)}});
  nlohmann::json json = {{"format", kFormat},
                         {"version", kVersion},
                         {"node_limit", graph.node_limit()},
                         {"dropped_nodes", graph.dropped_nodes()},
                         {"nodes", std::move(nodes)},
                         {"edges", std::move(edges)}};
  if (options.peaks) {
    json["peaks"] = {{"gflops_per_second", options.peaks->gflops_per_second},
                     {"gb_per_second", options.peaks->gb_per_second}};
  }
  return json.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ExecutionGraph graph_from_json(std::string_view text, std::string_view what) {
  const nlohmann::json document = detail::parse_json(text, what);
  const detail::JsonObject root(document, std::string(what));
  if (root.string("format") != kFormat) root.fail("format", fmt::format("\"{}\"", kFormat));
  if (root.integer("version", 0, std::numeric_limits<std::int64_t>::max()) != kVersion) {
    root.fail("version", fmt::format("{} (the version this build reads)", kVersion));
  }
  const std::size_t count = root.array("nodes").size();
  const auto limit = static_cast<std::size_t>(root.unsigned_integer("node_limit", kNoNode));
  if (limit == 0 || limit < count) root.fail("node_limit", fmt::format("a limit from {} to {}", std::max<std::size_t>(count, 1), kNoNode));
  ExecutionGraph graph(limit);
  for (std::size_t i = 0; i < count; ++i) {
    const detail::JsonObject n = root.element("nodes", i);
    if (n.unsigned_integer("id") != i) n.fail("id", fmt::format("{}, the node's index", i));
    Node node;
    const auto kind = parse_node_kind(n.string("kind"));
    if (!kind) n.fail("kind", "layer, brick, kernel, transfer, sync or scope");
    node.kind = *kind;
    const std::string label = n.string("label");
    const std::string source = optional_string(n, "source");
    const std::string destination = optional_string(n, "destination");
    const std::string waits_for = optional_string(n, "waits_for");
    node.label = label;
    node.source = source;
    node.destination = destination;
    node.waits_for = waits_for;
    node.layer = static_cast<std::int32_t>(
        n.integer("layer", std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    node.thread = static_cast<std::uint32_t>(n.unsigned_integer("thread", std::numeric_limits<std::uint32_t>::max()));
    node.start_ns = n.unsigned_integer("start_ns");
    node.duration_ns = n.unsigned_integer("duration_ns");
    const auto backend = parse_backend(n.string("backend"));
    if (!backend || *backend == Backend::Auto) n.fail("backend", "scalar, avx2 or avx512");
    node.backend = *backend;
    if (!n.is_null("brick")) {
      const auto id = brick_id_from_name(n.string("brick"));
      if (!id || name(*id) != n.string("brick")) n.fail("brick", "null or a BrickId's name");
      node.brick = *id;
    }
    node.elements = n.unsigned_integer("elements");
    node.flops = n.number("flops");
    node.bytes = n.number("bytes");
    const std::string direction = n.string("direction");
    const auto known = std::find_if(kDirections.begin(), kDirections.end(),
                                    [&](TransferDirection d) { return name(d) == direction; });
    if (known == kDirections.end()) n.fail("direction", "host_to_device, device_to_host, device_to_device or host_copy");
    node.direction = *known;
    NodeId id = kNoNode;
    try {
      id = graph.add_node(node);
    } catch (const InvalidArgument& error) {
      throw FormatError(fmt::format("{}: {}", n.path(), error.what()));
    }
    if (graph.node(id).call != n.unsigned_integer("call", std::numeric_limits<std::uint32_t>::max()) ||
        graph.name(id) != n.string("name")) {
      throw FormatError(fmt::format("{}: the name {} and call {} do not follow from the nodes before it (expected {})",
                                    n.path(), n.string("name"), n.unsigned_integer("call"), graph.name(id)));
    }
  }
  for (std::size_t i = 0; i < root.array("edges").size(); ++i) {
    const detail::JsonObject e = root.element("edges", i);
    const auto kind = parse_edge_kind(e.string("kind"));
    if (!kind) e.fail("kind", "contains, sequence, depends_on or launches");
    const auto from = static_cast<NodeId>(e.unsigned_integer("from", count > 0 ? count - 1 : 0));
    const auto to = static_cast<NodeId>(e.unsigned_integer("to", count > 0 ? count - 1 : 0));
    if (count == 0 || from == to) e.fail("to", "another node than from, both nodes of the graph");
    graph.add_edge(from, to, *kind);
  }
  graph.add_dropped(root.unsigned_integer("dropped_nodes"));
  return graph;
}

std::string to_chrome_trace(const ExecutionGraph& graph) {
  std::uint64_t epoch = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint32_t> threads;
  for (NodeId v = 0; v < graph.size(); ++v) {
    epoch = std::min(epoch, graph.node(v).start_ns);
    threads.push_back(graph.node(v).thread);
  }
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  const auto us = [&](std::uint64_t ns) { return static_cast<double>(ns - epoch) / 1e3; };

  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", 0}, {"args", {{"name", "brick graph"}}}});
  for (const std::uint32_t thread : threads) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", thread},
                      {"args", {{"name", thread == 0 ? std::string("recording thread") : fmt::format("pool slot {}", thread)}}}});
  }
  // Parents before children (earlier start, then longer), as trace viewers expect.
  std::vector<NodeId> order(graph.size());
  for (NodeId v = 0; v < graph.size(); ++v) order[v] = v;
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    const Node &x = graph.node(a), &y = graph.node(b);
    return x.start_ns != y.start_ns ? x.start_ns < y.start_ns : x.duration_ns > y.duration_ns;
  });
  for (const NodeId v : order) {
    const Node& n = graph.node(v);
    events.push_back({{"name", graph.name(v)},
                      {"cat", name(n.kind)},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", n.thread},
                      {"ts", us(n.start_ns)},
                      {"dur", static_cast<double>(n.duration_ns) / 1e3},
                      {"args",
                       {{"label", n.label},
                        {"layer", n.layer},
                        {"backend", name(n.backend)},
                        {"elements", n.elements},
                        {"flops", n.flops},
                        {"bytes", n.bytes}}}});
  }
  // A flow arrow per DependsOn edge: it leaves the end of `from` and arrives at the start of `to`
  // (the end, for a join); both ends bind to the enclosing slice.
  std::uint64_t flow = 0;
  for (const Edge& e : graph.edges()) {
    if (e.kind != EdgeKind::DependsOn) continue;
    const Node &from = graph.node(e.from), &to = graph.node(e.to);
    const std::uint64_t leave = from.duration_ns > 0 ? from.end_ns() - 1 : from.start_ns;
    const std::uint64_t arrive = to.kind == NodeKind::Sync && to.duration_ns > 0 ? to.end_ns() - 1 : to.start_ns;
    for (const auto& [phase, node, ts] : {std::tuple{"s", &from, leave}, std::tuple{"f", &to, arrive}}) {
      events.push_back({{"name", "depends_on"},
                        {"cat", "depends_on"},
                        {"ph", phase},
                        {"bp", "e"},
                        {"id", flow},
                        {"pid", kPid},
                        {"tid", node->thread},
                        {"ts", us(ts)}});
    }
    ++flow;
  }
  const nlohmann::json trace = {{"traceEvents", std::move(events)},
                                {"displayTimeUnit", "ns"},
                                {"otherData",
                                 {{"generator", "brick graph"},
                                  {"nodes", graph.size()},
                                  {"dropped_nodes", graph.dropped_nodes()}}}};
  return trace.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<GraphFormat> graph_format(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (extension == ".dot") return GraphFormat::Dot;
  if (extension == ".json") return GraphFormat::Json;
  return std::nullopt;
}

void write_graph(const std::filesystem::path& path, const ExecutionGraph& graph, const ExportOptions& options) {
  const auto format = graph_format(path);
  if (!format) {
    throw InvalidArgument(fmt::format("{}: a graph file ends in .dot (Graphviz) or .json", path.string()));
  }
  write_file_atomically(path, *format == GraphFormat::Dot ? to_dot(graph, options) : to_json(graph, options));
}

}  // namespace brick::graph
