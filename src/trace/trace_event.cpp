#include "brick/trace/trace_event.hpp"

#include <array>

namespace brick::trace {
namespace {

constexpr std::array kKindNames = {"tensor",      "activation", "attention", "logits",
                                   "layer_logits", "quant_error", "kv_cache", "anomaly"};
static_assert(kKindNames.size() == kTraceEventKinds);

}  // namespace

std::string_view name(TraceEventKind kind) noexcept {
  const auto i = static_cast<std::size_t>(kind);
  return i < kKindNames.size() ? kKindNames[i] : "unknown";
}

std::optional<TraceEventKind> parse_trace_event_kind(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (text == kKindNames[i]) return static_cast<TraceEventKind>(i);
  }
  return std::nullopt;
}

}  // namespace brick::trace
