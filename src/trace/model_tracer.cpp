#include "brick/trace/model_tracer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <new>

#include "brick/core/error.hpp"
#include "ops/dispatch.hpp"
#include "trace/kernels/stats_kernels.hpp"
#include "trace/trace_writer.hpp"

namespace brick::trace {
namespace {

std::vector<bool> filter_of(const std::vector<std::uint32_t>& ids) {
  if (ids.empty()) return {};
  std::vector<bool> filter(*std::max_element(ids.begin(), ids.end()) + std::size_t{1}, false);
  for (const std::uint32_t id : ids) filter[id] = true;
  return filter;
}

bool passes(const std::vector<bool>& filter, std::uint32_t id) noexcept {
  return filter.empty() || (id < filter.size() && filter[id]);
}

void check_values(std::span<const float> values, std::string_view call) {
  if (values.empty()) throw InvalidArgument(fmt::format("{}: an empty span of values", call));
}

// ||r|| / (||r|| + ||x - r||): the residual's share of the output (see activation.hpp).
double residual_ratio(std::span<const float> x, std::span<const float> residual) {
  const kernels::ResidualKernel sums = ops::detail::pick<kernels::ResidualKernel>(
      resolve(Backend::Auto), kernels::residual_sums_scalar, kernels::residual_sums_avx2,
      kernels::residual_sums_avx512);
  const kernels::ResidualSums s = sums(x.data(), residual.data(), x.size());
  const double r_norm = std::sqrt(s.residual);
  const double sum = r_norm + std::sqrt(s.delta);
  return sum > 0.0 && std::isfinite(sum) ? r_norm / sum : 0.0;
}

}  // namespace

ModelTracer::ModelTracer(TraceConfig config) : config_(std::move(config)) {
  config_.validate();
  kinds_ = config_.effective_kinds();
  layer_filter_ = filter_of(config_.layers);
  head_filter_ = filter_of(config_.heads);
  capacity_ = std::max<std::size_t>(1, std::min(config_.max_records, config_.max_bytes / sizeof(TraceEvent)));
  try {
    ring_.reserve(capacity_);
  } catch (const std::bad_alloc&) {
    throw CapacityError(fmt::format("trace ring of {} records ({} bytes each) does not fit in memory", capacity_,
                                    sizeof(TraceEvent)));
  }
}

ModelTracer::~ModelTracer() = default;

void ModelTracer::open_stream(const std::filesystem::path& path) {
  if (writer_) throw StateError("ModelTracer::open_stream: a stream is already open");
  writer_ = std::make_unique<TraceWriter>(path, config_);
}

void ModelTracer::close_stream() {
  if (!writer_) throw StateError("ModelTracer::close_stream: no stream is open");
  const std::unique_ptr<TraceWriter> writer = std::move(writer_);
  writer->finish(summary_);
}

void ModelTracer::begin_forward(std::int64_t token_pos) {
  if (in_forward_) throw StateError("ModelTracer::begin_forward inside a forward (end_forward() was not called)");
  in_forward_ = true;
  token_pos_ = token_pos;
  sampled_ = forward_ % config_.sample_every == 0;
  forward_anomalous_ = false;
  ++summary_.forwards;
  if (sampled_) ++summary_.sampled_forwards;
}

std::optional<Anomaly> ModelTracer::end_forward() {
  if (!in_forward_) throw StateError("ModelTracer::end_forward without begin_forward");
  in_forward_ = false;
  sampled_ = false;
  ++forward_;
  return first_anomaly_;
}

bool ModelTracer::layer_traced(std::uint32_t layer) const noexcept { return passes(layer_filter_, layer); }
bool ModelTracer::head_traced(std::uint32_t head) const noexcept { return passes(head_filter_, head); }

bool ModelTracer::quant_error_due() const noexcept {
  return kinds_.quant_error && in_forward_ && forward_ % config_.quant_error_every == 0;
}

std::optional<std::uint32_t> ModelTracer::quant_error_layer(std::uint32_t layers) const noexcept {
  if (!quant_error_due() || layers == 0) return std::nullopt;
  return static_cast<std::uint32_t>(forward_ / config_.quant_error_every % layers);
}

bool ModelTracer::logit_lens_due() const noexcept {
  return kinds_.layer_logits && sampled_ && forward_ % config_.logit_lens_every == 0;
}

void ModelTracer::require_forward(std::string_view call) const {
  if (!in_forward_) throw StateError(fmt::format("ModelTracer::{} outside begin_forward()/end_forward()", call));
}

void ModelTracer::push(const TraceEvent& event) {
  const auto k = static_cast<std::size_t>(kind(event));
  ++summary_.recorded[k];
  if (ring_.size() < capacity_) {
    ring_.push_back(event);
  } else {
    ++summary_.dropped[ring_[ring_next_].index()];
    ring_[ring_next_] = event;
    ring_next_ = (ring_next_ + 1) % capacity_;
  }
  if (writer_) writer_->write(event);
}

void ModelTracer::note_anomaly(const Anomaly& anomaly) {
  if (!first_anomaly_) first_anomaly_ = anomaly;
  if (!summary_.first_anomaly) summary_.first_anomaly = anomaly;
  if (forward_anomalous_) return;
  forward_anomalous_ = true;
  ++summary_.anomalous_forwards;
  push(AnomalyRecord{anomaly});
}

void ModelTracer::record_tensor(std::string_view name, std::span<const float> values, std::int32_t layer) {
  if (!kinds_.tensors) return;
  require_forward("record_tensor");
  if (!sampled_ || (layer >= 0 && !layer_traced(static_cast<std::uint32_t>(layer)))) return;
  check_values(values, "record_tensor");
  push(TensorRecord{TraceName(name), layer, token_pos_, forward_, compute_tensor_stats(values, config_.histogram)});
}

void ModelTracer::record_activation(std::uint32_t layer, ActivationPoint point, std::span<const float> values,
                                    std::span<const float> residual) {
  if (!kinds_.activations) return;
  require_forward("record_activation");
  if ((!sampled_ && !config_.anomalies_every_forward) || !layer_traced(layer)) return;
  check_values(values, "record_activation");
  if (!residual.empty() && residual.size() != values.size()) {
    throw InvalidArgument(fmt::format("record_activation: {} values and a residual of {}; expected the same size",
                                      values.size(), residual.size()));
  }
  if (static_cast<std::size_t>(point) >= static_cast<std::size_t>(ActivationPoint::COUNT)) {
    throw InvalidArgument("record_activation: a point that is not an ActivationPoint");
  }
  ActivationRecord record{layer, point, token_pos_, forward_, compute_tensor_stats(values, config_.histogram),
                          std::nullopt};
  if (!residual.empty()) record.residual_ratio = residual_ratio(values, residual);
  if (const auto found = detect_anomaly(record.stats, record.residual_ratio, config_.anomaly)) {
    note_anomaly(Anomaly{found->first, layer, point, token_pos_, forward_, found->second});
  }
  if (sampled_) push(record);
}

void ModelTracer::record_attention(std::uint32_t layer, std::uint32_t head, std::int64_t query_pos,
                                   std::span<const float> weights) {
  if (!kinds_.attention) return;
  require_forward("record_attention");
  if (!sampled_ || !layer_traced(layer) || !head_traced(head)) return;
  AttentionRecord record{layer, head, query_pos, forward_, compute_attention_stats(weights, config_.attention)};
  summary_.attention_sinks += record.stats.sink ? 1 : 0;
  summary_.attention_uniform += record.stats.uniform ? 1 : 0;
  summary_.attention_recency += record.stats.recency ? 1 : 0;
  push(record);
}

void ModelTracer::record_layer_logits(std::uint64_t step, std::uint32_t layer, std::span<const float> logits,
                                      std::int32_t chosen) {
  if (!kinds_.layer_logits) return;
  require_forward("record_layer_logits");
  if (!sampled_ || !layer_traced(layer)) return;
  const LogitStats stats = compute_logit_stats(logits, chosen, 1);
  if (lens_layers_.empty() || lens_step_ != step) {
    lens_layers_.clear();
    lens_ranks_.clear();
    lens_step_ = step;
  }
  lens_layers_.push_back(layer);
  lens_ranks_.push_back(stats.chosen.rank);
  lens_vocab_ = stats.vocab;
  push(LayerLogitRecord{step, layer, forward_, stats.chosen, stats.top[0]});
}

void ModelTracer::record_logits(std::uint64_t step, std::span<const float> logits, std::int32_t chosen) {
  if (!kinds_.logits) return;
  require_forward("record_logits");
  if (!sampled_) return;
  LogitRecord record{step, forward_, compute_logit_stats(logits, chosen, config_.logit_top_k, config_.tracked_tokens),
                     std::nullopt};
  if (!lens_layers_.empty() && lens_step_ == step) {
    if (const auto decisive = decisive_layer(lens_ranks_, lens_vocab_)) record.decisive_layer = lens_layers_[*decisive];
    lens_layers_.clear();
    lens_ranks_.clear();
  }
  push(record);
}

void ModelTracer::record_quant_error(std::string_view brick, std::uint32_t layer, std::span<const float> quantized,
                                     std::span<const float> reference) {
  if (!kinds_.quant_error || !layer_traced(layer)) return;
  const QuantErrorRecord record{TraceName(brick), layer, compute_quant_error(quantized, reference)};
  QuantSummary& q = summary_.quant;
  switch (record.error.quant_class) {
    case QuantClass::Ok:
      ++q.ok;
      break;
    case QuantClass::Warning:
      ++q.warning;
      break;
    case QuantClass::Critical:
      ++q.critical;
      break;
  }
  const auto badness = [](const QuantErrorRecord& r) { return r.error.non_finite > 0 ? -2.0 : r.error.cosine; };
  if (!q.worst || badness(record) < badness(*q.worst)) q.worst = record;
  push(record);
}

void ModelTracer::record_kv_cache(const KvCacheState& state) {
  if (!kinds_.kv_cache) return;
  summary_.kv_high_water = std::max(summary_.kv_high_water, state.high_water);
  push(state);
}

void ModelTracer::record_kv_cache(std::uint64_t step, const KvCache& cache, std::uint64_t evictions) {
  if (!kinds_.kv_cache) return;
  record_kv_cache(kv_cache_state(step, cache.stats(), evictions));
}

std::vector<TraceEvent> ModelTracer::events() const {
  std::vector<TraceEvent> events;
  events.reserve(ring_.size());
  events.insert(events.end(), ring_.begin() + static_cast<std::ptrdiff_t>(ring_next_), ring_.end());
  events.insert(events.end(), ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(ring_next_));
  return events;
}

}  // namespace brick::trace
