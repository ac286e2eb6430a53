#pragma once
// The exports of an ExecutionGraph:
//   to_ascii_tree   the nodes as an indented tree, for terminals and snapshot tests: the same graph
//                   gives the same text (nodes in id order under their parent, fixed number formats)
//   to_dot          Graphviz DOT: a box per node, edges styled by kind
//   to_json         schema "brick.graph" version 1 (below); graph_from_json reads it back
//   to_chrome_trace the Chrome Trace Event Format (ui.perfetto.dev, chrome://tracing): an "X" event
//                   per node on its thread's track, and flow arrows ("s"/"f") along DependsOn edges
//
// JSON: {"format": "brick.graph", "version": 1, "node_limit", "dropped_nodes",
//        "nodes": [{"id", "name", "kind", "label", "layer", "call", "thread", "start_ns",
//                   "duration_ns", "backend", "brick", "elements", "flops", "bytes", "source",
//                   "destination", "direction", "waits_for"[, "roofline": {...} with peaks]}],
//        "edges": [{"from", "to", "kind"}]}
// "brick" is the BrickId's name or null. Nodes appear in id order, so "id" is the index.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "brick/graph/execution_graph.hpp"
#include "brick/graph/roofline.hpp"

namespace brick::graph {

struct ExportOptions {
  std::optional<MachinePeaks> peaks = {};  // adds each kernel's and brick's roofline class
  bool durations = true;              // the ASCII tree without times reads the same on every run
};

std::string to_ascii_tree(const ExecutionGraph& graph, const ExportOptions& options = {});
std::string to_dot(const ExecutionGraph& graph, const ExportOptions& options = {});
std::string to_json(const ExecutionGraph& graph, const ExportOptions& options = {});
std::string to_chrome_trace(const ExecutionGraph& graph);

// FormatError naming `what` and the field for anything that is not a graph of this schema.
ExecutionGraph graph_from_json(std::string_view text, std::string_view what = "graph");

enum class GraphFormat : std::uint8_t { Dot, Json };
// By the extension, case-insensitive: .dot or .json; nullopt for another.
std::optional<GraphFormat> graph_format(const std::filesystem::path& path);
// Writes the DOT or JSON export atomically; InvalidArgument for another extension, IoError when
// the file cannot be written.
void write_graph(const std::filesystem::path& path, const ExecutionGraph& graph, const ExportOptions& options = {});

}  // namespace brick::graph
