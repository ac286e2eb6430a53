#pragma once
// TraceDigest: a saved trace (trace_file.hpp) boiled down to what one reads first when a model's
// output went wrong: the anomalies, the worst quantized bricks, the attention heads that park on the
// first token, and how sure the model was at each step. `brick trace-summary` prints it.
//
// It is computed from the file's events, so it covers what the file holds (a tracer's ring drops
// nothing from a stream); the file's summary record, when it has one, adds the counts of the whole
// run.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "brick/trace/trace_file.hpp"

namespace brick::trace {

// The quantization error measurements of one brick.
struct BrickQuantError {
  TraceName brick;
  std::uint32_t layer = 0;
  std::uint64_t samples = 0;
  double worst_cosine = 1.0;
  double mean_snr_db = 0.0;
  QuantClass worst_class = QuantClass::Ok;
  std::uint64_t non_finite = 0;
};

// The attention records of one layer and head.
struct HeadAttention {
  std::uint32_t layer = 0;
  std::uint32_t head = 0;
  std::uint64_t queries = 0;
  std::uint64_t sinks = 0;
  std::uint64_t uniform = 0;
  std::uint64_t recency = 0;
  double mean_entropy = 0.0;
};

// One decoding step's logits.
struct StepLogits {
  std::uint64_t step = 0;
  double entropy = 0.0;
  TokenLogit chosen;
  TokenLogit top;
  std::optional<std::uint32_t> decisive_layer;
};

struct TraceDigest {
  TraceConfig config;
  std::optional<TraceSummary> summary;  // the file's summary record
  std::array<std::uint64_t, kTraceEventKinds> events{};  // per TraceEventKind, in the file
  std::vector<Anomaly> anomalies;                        // each anomalous forward's first, in order
  std::vector<BrickQuantError> quant;                    // worst first (non-finite, then cosine)
  std::vector<HeadAttention> heads;                      // most sinks first, then layer and head
  std::vector<StepLogits> steps;                         // by step
  std::uint64_t kv_high_water = 0;
};

TraceDigest digest_trace(const TraceFile& file);

// Plain text, at most `rows` lines per table (rows >= 1; the steps evenly spaced, first and last
// kept).
std::string format_trace_digest(const TraceDigest& digest, std::size_t rows = 10);

}  // namespace brick::trace
