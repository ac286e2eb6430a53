#pragma once
// The events of a model trace: one value type per kind, each made by one ModelTracer call
// (model_tracer.hpp), and TraceEvent, any one of them. Every record is a plain value of fixed size
// (no heap memory), so that recording one copies it into a preallocated ring.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "brick/trace/activation.hpp"
#include "brick/trace/attention_stats.hpp"
#include "brick/trace/kv_cache_state.hpp"
#include "brick/trace/logit_stats.hpp"
#include "brick/trace/quant_error.hpp"
#include "brick/trace/tensor_stats.hpp"
#include "brick/trace/trace_name.hpp"

namespace brick::trace {

// record_tensor(): any named tensor (layer -1 when it belongs to no layer).
struct TensorRecord {
  TraceName name;
  std::int32_t layer = -1;
  std::int64_t token_pos = 0;
  std::uint64_t forward = 0;
  TensorStats stats;
  bool operator==(const TensorRecord&) const = default;
};

// record_attention(): one query's weights in one layer and head.
struct AttentionRecord {
  std::uint32_t layer = 0;
  std::uint32_t head = 0;
  std::int64_t query_pos = 0;
  std::uint64_t forward = 0;
  AttentionStats stats;
  bool operator==(const AttentionRecord&) const = default;
};

// record_logits(): the final logits of one decoding step. decisive_layer is the layer where the
// logit lens (record_layer_logits() calls of the same step, before this one) saw the chosen token's
// rank improve most.
struct LogitRecord {
  std::uint64_t step = 0;
  std::uint64_t forward = 0;
  LogitStats stats;
  std::optional<std::uint32_t> decisive_layer;
  bool operator==(const LogitRecord&) const = default;
};

// record_layer_logits(): the logit lens at one layer: where the token finally chosen stands, and
// what that layer alone would have picked.
struct LayerLogitRecord {
  std::uint64_t step = 0;
  std::uint32_t layer = 0;
  std::uint64_t forward = 0;
  TokenLogit chosen;
  TokenLogit top;
  bool operator==(const LayerLogitRecord&) const = default;
};

// record_quant_error(): one brick's quantized output against its reference.
struct QuantErrorRecord {
  TraceName brick;
  std::uint32_t layer = 0;
  QuantError error;
  bool operator==(const QuantErrorRecord&) const = default;
};

// The first anomaly of a forward pass (see activation.hpp); also latched by the tracer.
struct AnomalyRecord {
  Anomaly anomaly;
  bool operator==(const AnomalyRecord&) const = default;
};

// The alternatives' order is the order of TraceEventKind.
using TraceEvent = std::variant<TensorRecord, ActivationRecord, AttentionRecord, LogitRecord, LayerLogitRecord,
                                QuantErrorRecord, KvCacheState, AnomalyRecord>;

enum class TraceEventKind : std::uint8_t {
  Tensor,
  Activation,
  Attention,
  Logits,
  LayerLogits,
  QuantError,
  KvCache,
  Anomaly,
  COUNT
};

inline constexpr std::size_t kTraceEventKinds = static_cast<std::size_t>(TraceEventKind::COUNT);
static_assert(std::variant_size_v<TraceEvent> == kTraceEventKinds);

inline TraceEventKind kind(const TraceEvent& event) noexcept {
  return static_cast<TraceEventKind>(event.index());
}
// The `type` field of the event's JSON record: "tensor", "activation", "attention", "logits",
// "layer_logits", "quant_error", "kv_cache", "anomaly".
std::string_view name(TraceEventKind kind) noexcept;
std::optional<TraceEventKind> parse_trace_event_kind(std::string_view text) noexcept;

}  // namespace brick::trace
