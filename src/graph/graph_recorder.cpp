#include "brick/graph/graph_recorder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

constexpr std::string_view kJoin = "join";

bool launched(NodeKind parent, NodeKind child) noexcept {
  return (child == NodeKind::Kernel || child == NodeKind::Transfer) &&
         (parent == NodeKind::Brick || parent == NodeKind::Kernel);
}

// Labels become parts of unique names, which use '@' and '#': a brick named with them keeps its
// other characters.
std::string label_of(std::string_view name) {
  std::string label(name);
  std::replace_if(label.begin(), label.end(), [](char c) { return c == '@' || c == '#'; }, '_');
  return label;
}

std::int32_t layer_number(std::size_t index) noexcept {
  return static_cast<std::int32_t>(std::min<std::size_t>(index, std::numeric_limits<std::int32_t>::max()));
}

}  // namespace

template <class Second>
std::size_t GraphRecorder::PairHash::operator()(const std::pair<const void*, Second>& key) const noexcept {
  std::uintptr_t second = 0;
  if constexpr (std::is_pointer_v<Second>) {
    second = reinterpret_cast<std::uintptr_t>(key.second);
  } else {
    second = key.second;
  }
  return std::hash<std::uintptr_t>{}(reinterpret_cast<std::uintptr_t>(key.first) ^ (second * 0x9E3779B97F4A7C15ull));
}

GraphRecorder::GraphRecorder(GraphRecorderOptions options)
    : options_(std::move(options)), graph_(options_.node_limit), checksums_(options_.checksum_limit) {}

GraphRecorder::~GraphRecorder() {
  if (installed_ && active_kernel_recorder() == this) set_kernel_recorder(replaced_);
}

std::int32_t GraphRecorder::current_layer() const noexcept {
  for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
    if (it->kind == NodeKind::Layer) return it->layer;
  }
  return -1;
}

std::string_view GraphRecorder::child_label(std::string_view name) {
  if (stack_.empty() || stack_.back().label.empty()) return name;
  const std::string_view parent = stack_.back().label;
  const auto key = std::pair(static_cast<const void*>(parent.data()), static_cast<const void*>(name.data()));
  auto it = child_labels_.find(key);
  if (it == child_labels_.end()) it = child_labels_.emplace(key, fmt::format("{}/{}", parent, name)).first;
  return it->second;
}

std::string_view GraphRecorder::slot_label(std::size_t slot) {
  const std::string_view parent = stack_.back().label;
  const auto key = std::pair(static_cast<const void*>(parent.data()), slot);
  auto it = slot_labels_.find(key);
  if (it == slot_labels_.end()) it = slot_labels_.emplace(key, fmt::format("{}/slot {}", parent, slot)).first;
  return it->second;
}

NodeId GraphRecorder::add_child(const Node& node, bool on_this_thread) {
  const NodeId id = graph_.add_node(node);
  Frame* parent = stack_.empty() ? nullptr : &stack_.back();
  if (parent != nullptr) {
    graph_.add_edge(parent->node, id, launched(parent->kind, node.kind) ? EdgeKind::Launches : EdgeKind::Contains);
  }
  if (on_this_thread) {
    NodeId& last = parent != nullptr ? parent->last_child : last_root_;
    graph_.add_edge(last, id, EdgeKind::Sequence);
    if (id != kNoNode) last = id;
  }
  return id;
}

NodeId GraphRecorder::open(const Node& node) {
  const NodeId id = options_.record_nodes ? add_child(node, true) : kNoNode;
  const std::string_view label = id != kNoNode ? graph_.node(id).label : std::string_view();
  stack_.push_back({id, node.kind, label, node.layer, node.backend});
  if (!installed_ && options_.record_nodes) {
    replaced_ = set_kernel_recorder(this);
    installed_ = true;
  }
  return id;
}

void GraphRecorder::mismatch(NodeKind expected, const char* what) const {
  if (stack_.empty()) throw StateError(fmt::format("GraphRecorder::{}: no {} is open", what, name(expected)));
  const Frame& top = stack_.back();
  throw StateError(fmt::format("GraphRecorder::{}: the innermost open node is a {} ({}), not a {}", what,
                               name(top.kind), top.node != kNoNode ? graph_.name(top.node) : "not recorded",
                               name(expected)));
}

void GraphRecorder::close(NodeKind kind, const char* what) {
  if (stack_.empty() || stack_.back().kind != kind) mismatch(kind, what);
  if (stack_.back().node != kNoNode) graph_.set_end(stack_.back().node, kernel_clock_ns());
  stack_.pop_back();
  if (stack_.empty() && installed_) {
    set_kernel_recorder(replaced_);
    installed_ = false;
  }
}

void GraphRecorder::on_layer_begin(std::size_t layer_index) {
  if (!stack_.empty() && (stack_.back().kind == NodeKind::Brick || stack_.back().kind == NodeKind::Kernel)) {
    throw StateError(fmt::format(
        "GraphRecorder: layer {} begins inside the open {} {}; an exception left a run open (call reset())",
        layer_index, name(stack_.back().kind), stack_.back().label));
  }
  auto it = layer_labels_.find(layer_index);
  if (it == layer_labels_.end()) it = layer_labels_.emplace(layer_index, fmt::format("layer {}", layer_index)).first;
  Node node;
  node.kind = NodeKind::Layer;
  node.label = it->second;
  node.layer = layer_number(layer_index);
  node.start_ns = kernel_clock_ns();
  open(node);
}

void GraphRecorder::on_layer_end() { close(NodeKind::Layer, "on_layer_end"); }

void GraphRecorder::on_tokens(std::size_t first_position, std::size_t count) {
  first_position_ = first_position;
  token_count_ = count;
}

void GraphRecorder::on_brick_begin(BrickId id, std::string_view brick_name) {
  const bool plain = std::none_of(brick_name.begin(), brick_name.end(), [](char c) { return c == '@' || c == '#'; });
  const std::string renamed = plain ? std::string() : label_of(brick_name);
  Node node;
  node.kind = NodeKind::Brick;
  node.label = plain ? brick_name : std::string_view(renamed);
  node.layer = current_layer();
  node.brick = id;
  node.start_ns = kernel_clock_ns();
  open(node);
}

void GraphRecorder::on_brick_output(const RunReport& report, std::span<float> output) {
  if (options_.faults.empty() && !options_.record_checksums) return;
  const std::int32_t layer = current_layer();
  const std::size_t tokens = report.metrics.tokens;
  const bool by_token = token_count_ > 0 && tokens > 0 && tokens <= token_count_ && output.size() % tokens == 0;
  const std::size_t rows = by_token ? tokens : 1;
  const std::size_t width = output.size() / rows;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::int64_t position =
        token_count_ == 0 ? -1
                          : static_cast<std::int64_t>(first_position_ + token_count_ - (by_token ? tokens - r : 1));
    const std::span<float> row = output.subspan(r * width, width);
    for (const KernelFault& fault : options_.faults) {
      if (fault.position != position || !fault.matches(report.brick, layer, report.backend)) continue;
      for (float& value : row) value += fault.offset;
      ++faults_injected_;
    }
    if (options_.record_checksums) checksums_.record(report.brick, layer, position, row);
  }
}

void GraphRecorder::on_brick_end(BrickId, std::string_view, const RunReport* report) {
  if (stack_.empty() || stack_.back().kind != NodeKind::Brick) mismatch(NodeKind::Brick, "on_brick_end");
  if (report != nullptr && stack_.back().node != kNoNode) {
    const RunMetrics& m = report->metrics;
    graph_.set_work(stack_.back().node, m.tokens, m.flops, m.bytes);
    graph_.set_backend(stack_.back().node, report->backend);
    for (const NodeId piece : pieces_of_brick_) graph_.set_backend(piece, report->backend);
  }
  pieces_of_brick_.clear();
  close(NodeKind::Brick, "on_brick_end");
}

void GraphRecorder::begin_scope(std::string_view label) {
  Node node;
  node.kind = NodeKind::Scope;
  node.label = label;
  node.layer = current_layer();
  node.start_ns = kernel_clock_ns();
  open(node);
}

void GraphRecorder::end_scope() { close(NodeKind::Scope, "end_scope"); }

void GraphRecorder::kernel_begin(std::string_view kernel, Backend backend, std::uint64_t start_ns) noexcept {
  try {
    Node node;
    node.kind = NodeKind::Kernel;
    node.label = child_label(kernel);
    node.layer = current_layer();
    node.start_ns = start_ns;
    node.backend = backend;
    open(node);
  } catch (...) {
    ++unplaced_;  // no memory for the node: the kernel still runs, unrecorded
  }
}

void GraphRecorder::kernel_end(const KernelWork& work, std::uint64_t end_ns) noexcept {
  if (stack_.empty() || stack_.back().kind != NodeKind::Kernel) {
    ++unplaced_;
    return;
  }
  const NodeId id = stack_.back().node;
  if (id != kNoNode) {
    graph_.set_work(id, work.elements, work.flops, work.bytes);
    graph_.set_end(id, end_ns);
  }
  stack_.pop_back();
  if (stack_.empty() && installed_) {
    set_kernel_recorder(replaced_);
    installed_ = false;
  }
}

void GraphRecorder::transfer(const TransferRecord& record) noexcept {
  try {
    Node node;
    node.kind = NodeKind::Transfer;
    node.label = child_label(record.destination);
    node.layer = current_layer();
    node.start_ns = record.start_ns;
    node.duration_ns = record.end_ns > record.start_ns ? record.end_ns - record.start_ns : 0;
    node.bytes = static_cast<double>(record.bytes);
    node.source = record.source;
    node.destination = record.destination;
    node.direction = record.direction;
    add_child(node, true);
  } catch (...) {
    ++unplaced_;
  }
}

void GraphRecorder::parallel_call(const ParallelCall& call) noexcept {
  try {
    if (stack_.empty()) return;  // a recorder is installed only while a node is open
    const std::int32_t layer = current_layer();
    const Backend backend = stack_.back().backend;
    std::vector<NodeId> workers;
    for (const ParallelPiece& piece : call.pieces) {
      Node node;
      node.kind = NodeKind::Kernel;
      node.label = slot_label(piece.slot);
      node.layer = layer;
      node.thread = piece.on_caller ? 0 : static_cast<std::uint32_t>(piece.slot);
      node.start_ns = piece.start_ns;
      node.duration_ns = piece.end_ns > piece.start_ns ? piece.end_ns - piece.start_ns : 0;
      node.backend = backend;
      node.elements = piece.end - piece.begin;
      const NodeId id = add_child(node, piece.on_caller);
      if (!piece.on_caller) workers.push_back(id);
      if (id != kNoNode && stack_.back().kind == NodeKind::Brick) pieces_of_brick_.push_back(id);
    }
    if (workers.empty()) return;
    Node join;
    join.kind = NodeKind::Sync;
    join.label = child_label(kJoin);
    join.layer = layer;
    join.start_ns = call.join_start_ns;
    join.duration_ns = call.end_ns > call.join_start_ns ? call.end_ns - call.join_start_ns : 0;
    join.waits_for = "pool workers";
    const NodeId id = add_child(join, true);
    for (const NodeId worker : workers) graph_.add_edge(worker, id, EdgeKind::DependsOn);
  } catch (...) {
    ++unplaced_;
  }
}

void GraphRecorder::reset() {
  stack_.clear();
  if (installed_ && active_kernel_recorder() == this) set_kernel_recorder(replaced_);
  installed_ = false;
  graph_.clear();
  checksums_.clear();
  child_labels_.clear();
  slot_labels_.clear();
  pieces_of_brick_.clear();
  last_root_ = kNoNode;
  token_count_ = 0;
  faults_injected_ = 0;
  unplaced_ = 0;
}

}  // namespace brick::graph
