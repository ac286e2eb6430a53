#pragma once
// What a ModelTracer records. The level sets the default kinds:
//   Off          nothing (every record call returns at once, whatever `kinds` says)
//   Lightweight  tensor stats and layer activations, with anomaly detection
//   Full         everything: also attention, logits, the logit lens, quantization error, KV cache
// `kinds`, when set, replaces the level's choice (for a level other than Off).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "brick/trace/activation.hpp"
#include "brick/trace/attention_stats.hpp"
#include "brick/trace/tensor_stats.hpp"

namespace brick::trace {

enum class TraceLevel : std::uint8_t { Off, Lightweight, Full };

std::string_view name(TraceLevel level) noexcept;  // "off", "lightweight", "full"
// Case-insensitive.
std::optional<TraceLevel> parse_trace_level(std::string_view text) noexcept;

struct TraceKinds {
  bool tensors = false;
  bool activations = false;
  bool attention = false;
  bool logits = false;
  bool layer_logits = false;
  bool quant_error = false;
  bool kv_cache = false;
  bool operator==(const TraceKinds&) const = default;
};

TraceKinds default_kinds(TraceLevel level) noexcept;

// Layer and head ids in filters are below this.
inline constexpr std::uint32_t kMaxFilterId = 65536;

struct TraceConfig {
  TraceLevel level = TraceLevel::Lightweight;
  std::optional<TraceKinds> kinds;
  // Only these layers (activations, attention, layer logits, quantization error, tensors that name a
  // layer) and heads (attention) are traced; empty = all.
  std::vector<std::uint32_t> layers;
  std::vector<std::uint32_t> heads;
  // Forward passes 0, N, 2N, ... are sampled; record calls in the others return at once, except that
  // activations are still checked for anomalies when anomalies_every_forward is set (and then not
  // stored).
  std::uint64_t sample_every = 1;
  bool anomalies_every_forward = true;
  // The two kinds a caller pays most for (a reference product per projection, an LM head per
  // layer) are due on forwards 0, N, 2N, ... of their own, the logit lens only on sampled ones; on
  // each due forward quantization error is measured for one layer, the next in turn
  // (ModelTracer::quant_error_layer), so that every projection is measured once every
  // quant_error_every x (layers) forwards for the cost of one layer's reference.
  std::uint64_t quant_error_every = 4;
  std::uint64_t logit_lens_every = 8;
  // The in-memory ring holds min(max_records, max_bytes / record size) events, at least 1; the
  // oldest are dropped (and counted) past that. The ring is reserved when the tracer is made.
  std::size_t max_records = 65536;
  std::size_t max_bytes = std::size_t{16} << 20;
  HistogramSpec histogram;  // for tensors and activations; none by default
  AttentionOptions attention;
  std::size_t logit_top_k = 5;               // 1..kMaxLogitTopK
  std::vector<std::int32_t> tracked_tokens;  // at most kMaxTrackedTokens ids >= 0
  AnomalyThresholds anomaly;

  TraceKinds effective_kinds() const noexcept;
  // InvalidArgument naming the field: sample_every 0, max_records or max_bytes 0, a level outside
  // TraceLevel, a bad histogram or attention option, logit_top_k outside 1..kMaxLogitTopK, too many
  // or negative tracked tokens, a filter id >= kMaxFilterId, non-positive or non-finite thresholds.
  void validate() const;
  bool operator==(const TraceConfig&) const = default;
};

}  // namespace brick::trace
