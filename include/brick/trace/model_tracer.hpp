#pragma once
// ModelTracer: model-level observability for inference. A decoder calls the record functions with
// spans of floats it already has; the tracer computes a small value per call (trace_event.hpp),
// keeps the last ones in a bounded ring, streams each to a JSON Lines file when one is open
// (trace_file.hpp), keeps a running summary, and latches the first anomaly.
//
//   tracer.begin_forward(pos);
//   for each layer: record_activation(layer, ActivationPoint::Input, x); ...
//                   record_attention(layer, head, pos, weights);   // Full
//   record_logits(step, logits, chosen);                            // Full
//   if (auto anomaly = tracer.end_forward()) { ... where it went wrong first ... }
//
// Cost. A call that the level, the kinds, the layer/head filter or sampling excludes returns after
// a few comparisons. Recording never allocates once the tracer is made (the ring and the filters are
// allocated then, and with a stream open its write buffer grows only up to its flush size during the
// first records); the logit lens keeps one rank per layer of the current step in a vector that grows
// to the number of layers.
//
// Errors. Empty spans, spans of different sizes, a bad name or an out-of-range token id throw
// InvalidArgument before anything is recorded; record_tensor/activation/attention/logits/
// layer_logits outside begin_forward()/end_forward(), a nested begin_forward() or an end_forward()
// without one throw StateError. NaN-only tensors are not errors: their stats say so (count 0,
// nan_count n) and they are NonFinite anomalies. record_quant_error and record_kv_cache may be called
// anywhere (they carry their own layer and step).
//
// Not thread-safe: one thread records (the decoder's driving thread).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "brick/trace/trace_config.hpp"
#include "brick/trace/trace_event.hpp"
#include "brick/trace/trace_summary.hpp"

namespace brick::trace {

class TraceWriter;

class ModelTracer {
 public:
  // InvalidArgument (see TraceConfig::validate); CapacityError when the ring cannot be reserved.
  explicit ModelTracer(TraceConfig config = {});
  ~ModelTracer();
  ModelTracer(const ModelTracer&) = delete;
  ModelTracer& operator=(const ModelTracer&) = delete;

  const TraceConfig& config() const noexcept { return config_; }
  const TraceKinds& kinds() const noexcept { return kinds_; }

  // Streams every event from now on to `path` as JSON Lines: a header record (schema version and
  // config) now, one record per event as it is recorded, and the summary at close_stream(). The file
  // is an AtomicFile: it appears at `path` only when close_stream() commits it; a tracer destroyed
  // with a stream open leaves nothing there. IoError when it cannot be created or written; StateError
  // when a stream is already open.
  void open_stream(const std::filesystem::path& path);
  // Writes the summary record and commits the file. StateError when no stream is open.
  void close_stream();
  bool streaming() const noexcept { return writer_ != nullptr; }

  // Forward passes: one per token position (or per batch, at its first position).
  void begin_forward(std::int64_t token_pos);
  // The latched first anomaly (of this or an earlier forward; see clear_anomaly()), or nullopt.
  std::optional<Anomaly> end_forward();
  bool in_forward() const noexcept { return in_forward_; }
  // Whether the current forward is sampled (records are kept).
  bool sampled() const noexcept { return sampled_; }
  // Whether a record of this layer / head passes the config's filters.
  bool layer_traced(std::uint32_t layer) const noexcept;
  bool head_traced(std::uint32_t head) const noexcept;
  // Whether the current forward is one that quantization error (any forward) or the logit lens (a
  // sampled one) is due on: its index a multiple of quant_error_every / logit_lens_every, the kind
  // traced. A caller computes the reference outputs or the per-layer logits only then.
  bool quant_error_due() const noexcept;
  bool logit_lens_due() const noexcept;
  // On a forward quantization error is due on, the one of `layers` layers (0 .. layers - 1) it is
  // measured for: the due forwards take them in turn. nullopt on other forwards or for no layers.
  std::optional<std::uint32_t> quant_error_layer(std::uint32_t layers) const noexcept;

  void record_tensor(std::string_view name, std::span<const float> values, std::int32_t layer = -1);
  // `residual`: empty, or the residual stream `values` was added onto (same size), for the ratio.
  void record_activation(std::uint32_t layer, ActivationPoint point, std::span<const float> values,
                         std::span<const float> residual = {});
  void record_attention(std::uint32_t layer, std::uint32_t head, std::int64_t query_pos,
                        std::span<const float> weights);
  void record_logits(std::uint64_t step, std::span<const float> logits, std::int32_t chosen);
  // The logit lens: `logits` are what the LM head makes of this layer's output. Call them for a step
  // before record_logits() of that step.
  void record_layer_logits(std::uint64_t step, std::uint32_t layer, std::span<const float> logits,
                           std::int32_t chosen);
  void record_quant_error(std::string_view brick, std::uint32_t layer, std::span<const float> quantized,
                          std::span<const float> reference);
  void record_kv_cache(const KvCacheState& state);
  void record_kv_cache(std::uint64_t step, const KvCache& cache, std::uint64_t evictions = 0);

  std::optional<Anomaly> first_anomaly() const noexcept { return first_anomaly_; }
  void clear_anomaly() noexcept { first_anomaly_.reset(); }

  TraceSummary summary() const { return summary_; }
  // The ring's events, oldest first.
  std::vector<TraceEvent> events() const;
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  void require_forward(std::string_view call) const;
  void push(const TraceEvent& event);
  void note_anomaly(const Anomaly& anomaly);

  TraceConfig config_;
  TraceKinds kinds_;
  std::vector<bool> layer_filter_;  // empty: every layer
  std::vector<bool> head_filter_;
  std::vector<TraceEvent> ring_;
  std::size_t capacity_ = 0;
  std::size_t ring_next_ = 0;  // the slot the next event goes into once the ring is full
  std::unique_ptr<TraceWriter> writer_;
  TraceSummary summary_;
  std::optional<Anomaly> first_anomaly_;
  bool forward_anomalous_ = false;
  bool in_forward_ = false;
  bool sampled_ = false;
  std::int64_t token_pos_ = 0;
  std::uint64_t forward_ = 0;  // index of the current (or next) forward
  std::uint64_t lens_step_ = 0;
  std::vector<std::uint32_t> lens_layers_;
  std::vector<std::uint32_t> lens_ranks_;
  std::uint32_t lens_vocab_ = 0;
};

}  // namespace brick::trace
