#pragma once
// TraceSummary: a whole trace in a few numbers, kept by the tracer as it records (so it covers the
// events dropped from the ring too) and written as the last record of a trace file.
#include <array>
#include <cstdint>
#include <optional>

#include "brick/trace/activation.hpp"
#include "brick/trace/trace_event.hpp"

namespace brick::trace {

struct QuantSummary {
  std::uint64_t ok = 0;
  std::uint64_t warning = 0;
  std::uint64_t critical = 0;
  std::optional<QuantErrorRecord> worst;  // non-finite values first, then the lowest cosine; first on ties
  bool operator==(const QuantSummary&) const = default;
};

struct TraceSummary {
  std::uint64_t forwards = 0;
  std::uint64_t sampled_forwards = 0;
  std::array<std::uint64_t, kTraceEventKinds> recorded{};  // per TraceEventKind, dropped ones included
  std::array<std::uint64_t, kTraceEventKinds> dropped{};   // pushed out of the ring
  std::uint64_t anomalous_forwards = 0;
  std::optional<Anomaly> first_anomaly;
  std::uint64_t attention_sinks = 0;
  std::uint64_t attention_uniform = 0;
  std::uint64_t attention_recency = 0;
  QuantSummary quant;
  std::uint64_t kv_high_water = 0;

  std::uint64_t recorded_total() const noexcept;
  std::uint64_t dropped_total() const noexcept;
  bool operator==(const TraceSummary&) const = default;
};

}  // namespace brick::trace
