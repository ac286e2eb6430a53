#include "brick/graph/graph_export.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

namespace fs = std::filesystem;

// One layer of two bricks; the second launches a parallel pass (two pieces and a join) and writes
// the KV cache.
ExecutionGraph sample() {
  ExecutionGraph g;
  const auto add = [&](NodeKind kind, std::string_view label, std::uint64_t start, std::uint64_t duration) {
    Node node;
    node.kind = kind;
    node.label = label;
    node.layer = 0;
    node.start_ns = start;
    node.duration_ns = duration;
    return node;
  };
  const NodeId layer = g.add_node(add(NodeKind::Layer, "layer 0", 1000, 9000));
  Node norm = add(NodeKind::Brick, "blk.0.attn_norm", 1100, 1000);
  norm.brick = BrickId::RmsNorm;
  norm.backend = Backend::Avx2;
  norm.elements = 1;
  norm.flops = 1024;
  norm.bytes = 3072;
  const NodeId a = g.add_node(norm);
  Node qkv = add(NodeKind::Brick, "blk.0.qkv", 2200, 7000);
  qkv.brick = BrickId::QkvProjection;
  qkv.backend = Backend::Avx2;
  const NodeId b = g.add_node(qkv);
  Node pass = add(NodeKind::Kernel, "blk.0.qkv/dot_q4k_q8k_avx2", 2300, 5000);
  pass.backend = Backend::Avx2;
  pass.elements = 768;
  pass.flops = 393216;
  pass.bytes = 110592;
  const NodeId k = g.add_node(pass);
  Node slot0 = add(NodeKind::Kernel, "blk.0.qkv/dot_q4k_q8k_avx2/slot 0", 2400, 3000);
  slot0.elements = 384;
  const NodeId p0 = g.add_node(slot0);
  Node slot1 = add(NodeKind::Kernel, "blk.0.qkv/dot_q4k_q8k_avx2/slot 1", 2500, 4500);
  slot1.thread = 1;
  slot1.elements = 384;
  const NodeId p1 = g.add_node(slot1);
  Node join = add(NodeKind::Sync, "blk.0.qkv/dot_q4k_q8k_avx2/join", 5400, 1600);
  join.waits_for = "pool workers";
  const NodeId j = g.add_node(join);
  Node kv = add(NodeKind::Transfer, "blk.0.qkv/kv_cache", 7400, 300);
  kv.source = "k,v rows";
  kv.destination = "kv_cache";
  kv.bytes = 1024;
  const NodeId t = g.add_node(kv);
  g.add_edge(layer, a, EdgeKind::Contains);
  g.add_edge(layer, b, EdgeKind::Contains);
  g.add_edge(a, b, EdgeKind::Sequence);
  g.add_edge(b, k, EdgeKind::Launches);
  g.add_edge(k, p0, EdgeKind::Launches);
  g.add_edge(k, p1, EdgeKind::Launches);
  g.add_edge(k, j, EdgeKind::Contains);
  g.add_edge(p0, j, EdgeKind::Sequence);
  g.add_edge(p1, j, EdgeKind::DependsOn);
  g.add_edge(b, t, EdgeKind::Launches);
  g.add_edge(k, t, EdgeKind::Sequence);
  return g;
}

TEST(AsciiTree, IsTheSameTextForTheSameGraph) {
  const std::string expected =
      "execution graph: 8 nodes, 11 edges\n"
      "layer 0@0#0 [layer: 9.000 us]\n"
      "|-- blk.0.attn_norm@0#0 [brick: RmsNorm avx2, 1 elements, 1024 FLOP, 3072 B, 1.000 us]\n"
      "`-- blk.0.qkv@0#0 [brick: QkvProjection avx2, 0 elements, 0 FLOP, 0 B, 7.000 us]\n"
      "    |-- blk.0.qkv/dot_q4k_q8k_avx2@0#0 [kernel: avx2, 768 elements, 393216 FLOP, 110592 B, 5.000 us]\n"
      "    |   |-- blk.0.qkv/dot_q4k_q8k_avx2/slot 0@0#0 [kernel: scalar, 384 elements, 0 FLOP, 0 B, 3.000 us]\n"
      "    |   |-- blk.0.qkv/dot_q4k_q8k_avx2/slot 1@0#0 [kernel: scalar, 384 elements, 0 FLOP, 0 B, thread 1, "
      "4.500 us]\n"
      "    |   `-- blk.0.qkv/dot_q4k_q8k_avx2/join@0#0 [sync: waits for pool workers, 1.600 us]\n"
      "    `-- blk.0.qkv/kv_cache@0#0 [transfer: host_copy k,v rows -> kv_cache, 1024 B, 0.300 us]\n";
  EXPECT_EQ(to_ascii_tree(sample()), expected);

  ExecutionGraph dropped(1);
  Node scope;
  scope.label = "s";
  dropped.add_node(scope);
  dropped.add_node(scope);
  EXPECT_EQ(to_ascii_tree(dropped, {.durations = false}),
            "execution graph: 1 nodes, 0 edges (1 nodes dropped past the limit of 1)\ns#0 [scope]\n");
}

TEST(AsciiTree, AddsTheRooflineWithPeaks) {
  const std::string tree = to_ascii_tree(sample(), {.peaks = MachinePeaks{100.0, 10.0}, .durations = false});
  EXPECT_NE(tree.find("blk.0.qkv/dot_q4k_q8k_avx2@0#0 [kernel: avx2, 768 elements, 393216 FLOP, 110592 B, "
                      "memory-bound, 221% of the roof]"),
            std::string::npos)
      << tree;
  EXPECT_EQ(tree.find(" us"), std::string::npos) << tree;
}

// The statements of a DOT file as written: nodes "nID [label=\"NAME\\n...\", ..., kind=\"K\"];"
// and edges "nA -> nB [..., kind=\"K\"];".
struct Dot {
  std::map<NodeId, std::pair<std::string, std::string>> nodes;  // name, kind
  std::vector<Edge> edges;
};

NodeId number(std::string_view text) {
  NodeId value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

std::string attribute(const std::string& line, const std::string& key) {
  const std::size_t start = line.find(key + "=\"");
  if (start == std::string::npos) return {};
  std::string value;
  for (std::size_t i = start + key.size() + 2; i < line.size() && line[i] != '"'; ++i) {
    if (line[i] == '\\') {
      ++i;
      value += line[i] == 'n' ? '\n' : line[i];  // DOT's line break, else an escaped quote or backslash
    } else {
      value += line[i];
    }
  }
  return value;
}

Dot parse_dot(const std::string& text) {
  Dot dot;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "digraph execution {");
  while (std::getline(in, line)) {
    if (line == "}" || line.starts_with("  node ") || line.starts_with("  //")) continue;
    EXPECT_TRUE(line.starts_with("  n") && line.ends_with("];")) << line;
    const std::size_t arrow = line.find(" -> n");
    const std::string kind = attribute(line, "kind");
    if (arrow != std::string::npos) {
      dot.edges.push_back({number(std::string_view(line).substr(3)), number(std::string_view(line).substr(arrow + 5)),
                           *parse_edge_kind(kind)});
    } else {
      const std::string label = attribute(line, "label");
      dot.nodes[number(std::string_view(line).substr(3))] = {label.substr(0, label.find('\n')), kind};
    }
  }
  return dot;
}

TEST(Dot, ParsesBackToTheSameNodesAndEdges) {
  ExecutionGraph g = sample();
  Node quoted;
  quoted.label = "a \"quoted\\\" scope";
  g.add_node(quoted);
  const Dot dot = parse_dot(to_dot(g));
  ASSERT_EQ(dot.nodes.size(), g.size());
  for (NodeId v = 0; v < g.size(); ++v) {
    EXPECT_EQ(dot.nodes.at(v).first, g.name(v));
    EXPECT_EQ(dot.nodes.at(v).second, name(g.node(v).kind));
  }
  EXPECT_EQ(dot.edges, std::vector<Edge>(g.edges().begin(), g.edges().end()));
}

TEST(Json, ParsesBackToTheSameGraph) {
  ExecutionGraph original = sample();
  original.add_dropped(3);
  const std::string text = to_json(original, {.peaks = MachinePeaks{100.0, 10.0}});
  const ExecutionGraph back = graph_from_json(text);
  ASSERT_EQ(back.size(), original.size());
  for (NodeId v = 0; v < back.size(); ++v) {
    const Node &a = original.node(v), &b = back.node(v);
    EXPECT_EQ(back.name(v), original.name(v));
    EXPECT_EQ(std::tie(a.kind, a.layer, a.call, a.thread, a.start_ns, a.duration_ns, a.backend, a.brick, a.elements,
                       a.direction),
              std::tie(b.kind, b.layer, b.call, b.thread, b.start_ns, b.duration_ns, b.backend, b.brick, b.elements,
                       b.direction));
    EXPECT_EQ(std::tie(a.flops, a.bytes), std::tie(b.flops, b.bytes));
    EXPECT_EQ(std::tie(a.label, a.source, a.destination, a.waits_for),
              std::tie(b.label, b.source, b.destination, b.waits_for));
  }
  EXPECT_EQ(std::vector<Edge>(back.edges().begin(), back.edges().end()),
            std::vector<Edge>(original.edges().begin(), original.edges().end()));
  EXPECT_EQ(back.dropped_nodes(), 3u);
  EXPECT_EQ(to_json(back), to_json(original));
  const auto json = nlohmann::json::parse(text);
  EXPECT_EQ(json["nodes"][3]["roofline"]["class"], "memory-bound");
  EXPECT_EQ(json["nodes"][0].contains("roofline"), false);  // a layer has none
}

TEST(Json, AMalformedGraphIsAFormatError) {
  const nlohmann::json good = nlohmann::json::parse(to_json(sample()));
  const auto changed = [&](auto edit) {
    nlohmann::json copy = good;
    edit(copy);
    return copy.dump();
  };
  const std::vector<std::string> cases = {
      "",
      "{",
      changed([](nlohmann::json& j) { j["format"] = "brick.checksums"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["id"] = 5; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["kind"] = "op"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["label"] = "a#b"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["label"] = ""; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["call"] = 4; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["name"] = "other"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["backend"] = "auto"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["brick"] = "rms_norm"; }),  // an alias, not the name
      changed([](nlohmann::json& j) { j["nodes"][1]["direction"] = "sideways"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["flops"] = "many"; }),
      changed([](nlohmann::json& j) { j["nodes"][1]["source"] = 3; }),
      changed([](nlohmann::json& j) { j["nodes"][1].erase("waits_for"); }),
      changed([](nlohmann::json& j) { j["edges"][0]["to"] = 99; }),
      changed([](nlohmann::json& j) { j["edges"][0]["to"] = j["edges"][0]["from"]; }),
      changed([](nlohmann::json& j) { j["edges"][0]["kind"] = "owns"; }),
      changed([](nlohmann::json& j) { j["node_limit"] = 2; }),
      changed([](nlohmann::json& j) { j["dropped_nodes"] = -1; }),
  };
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_THROW(graph_from_json(cases[i]), FormatError) << i;
}

TEST(ChromeTrace, HasASliceForEveryNodeAndAFlowForEveryDependency) {
  const ExecutionGraph g = sample();
  const auto trace = nlohmann::json::parse(to_chrome_trace(g));
  std::map<std::string, int> phases;
  for (const auto& event : trace["traceEvents"]) ++phases[event["ph"].get<std::string>()];
  EXPECT_EQ(phases["X"], static_cast<int>(g.size()));
  EXPECT_EQ(phases["s"], 1);  // one DependsOn edge
  EXPECT_EQ(phases["f"], 1);
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["name"] == "layer 0@0#0") {
      EXPECT_DOUBLE_EQ(event["ts"].get<double>(), 0.0);
      EXPECT_DOUBLE_EQ(event["dur"].get<double>(), 9.0);
    }
    if (event["ph"] == "f") {
      EXPECT_EQ(event["tid"], 0);  // arrives at the join on the caller's track
    }
    if (event["ph"] == "s") {
      EXPECT_EQ(event["tid"], 1);  // leaves the worker's piece
    }
  }
}

TEST(WriteGraph, PicksTheFormatByExtension) {
  const fs::path folder = fs::temp_directory_path() / fmt::format("brick-graph-export-{}", getpid());
  fs::create_directories(folder);
  write_graph(folder / "g.DOT", sample());
  write_graph(folder / "g.json", sample());
  std::ifstream dot(folder / "g.DOT"), json(folder / "g.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(dot), {}), to_dot(sample()));
  EXPECT_EQ(graph_from_json(std::string(std::istreambuf_iterator<char>(json), {})).size(), 8u);
  EXPECT_THROW(write_graph(folder / "g.txt", sample()), InvalidArgument);
  EXPECT_THROW(write_graph(folder / "missing" / "g.dot", sample()), IoError);
  EXPECT_EQ(graph_format("x.Json"), GraphFormat::Json);
  EXPECT_FALSE(graph_format("x"));
  fs::remove_all(folder);
}

}  // namespace
}  // namespace brick::graph
