#include "trace/trace_json.hpp"

#include <fmt/compile.h>

#include <cmath>
#include <iterator>
#include <string_view>
#include <utility>

namespace brick::trace::detail {
namespace {

using Out = fmt::memory_buffer;

template <class... Args>
void put(Out& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(fmt::appender(out), format, std::forward<Args>(args)...);
}

void append(Out& out, std::string_view text) { out.append(text.data(), text.data() + text.size()); }

// Non-finite numbers have no JSON form; a record never holds one, and null makes a reader fail
// loudly if one ever does.
void number(Out& out, double x) {
  if (std::isfinite(x)) {
    fmt::format_to(fmt::appender(out), FMT_COMPILE("{}"), x);  // the shortest form that reads back
  } else {
    append(out, "null");
  }
}

// The record's number fields, its most common part, go out without a format string to parse.
void key_number(Out& out, std::string_view key, double x) {
  append(out, ",\"");
  append(out, key);
  append(out, "\":");
  number(out, x);
}

void boolean(Out& out, std::string_view key, bool value) { put(out, ",\"{}\":{}", key, value); }

void histogram(Out& out, const Histogram& h) {
  put(out, ",\"histogram\":{{\"bins\":{},\"lo\":", h.spec.bins);
  number(out, h.spec.lo);
  key_number(out, "hi", h.spec.hi);
  put(out, ",\"counts\":[");
  for (std::size_t i = 0; i < h.spec.bins; ++i) put(out, "{}{}", i == 0 ? "" : ",", h.counts[i]);
  put(out, "],\"below\":{},\"above\":{}}}", h.below, h.above);
}

void stats(Out& out, const TensorStats& s) {
  put(out, ",\"stats\":{{\"count\":{}", s.count);
  key_number(out, "min", s.min);
  key_number(out, "max", s.max);
  key_number(out, "mean", s.mean);
  key_number(out, "std", s.std);
  key_number(out, "l2_norm", s.l2_norm);
  put(out, ",\"nan\":{},\"inf\":{}", s.nan_count, s.inf_count);
  if (s.histogram.spec.enabled()) histogram(out, s.histogram);
  put(out, "}}");
}

void token(Out& out, const TokenLogit& t) {
  put(out, "{{\"token\":{},\"logit\":", t.token);
  number(out, t.logit);
  key_number(out, "probability", t.probability);
  put(out, ",\"rank\":{}}}", t.rank);
}

void tokens(Out& out, std::string_view key, std::span<const TokenLogit> list) {
  put(out, ",\"{}\":[", key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) put(out, ",");
    token(out, list[i]);
  }
  put(out, "]");
}

void anomaly_fields(Out& out, const Anomaly& a) {
  put(out, "\"kind\":\"{}\",\"layer\":{},\"point\":\"{}\",\"token_pos\":{},\"forward\":{}", name(a.kind), a.layer,
      name(a.point), a.token_pos, a.forward);
  key_number(out, "value", a.value);
}

void quant_fields(Out& out, const QuantErrorRecord& r) {
  put(out, "\"brick\":\"{}\",\"layer\":{},\"count\":{}", r.brick.view(), r.layer, r.error.count);
  key_number(out, "mse", r.error.mse);
  key_number(out, "max_abs_error", r.error.max_abs_error);
  key_number(out, "cosine", r.error.cosine);
  key_number(out, "snr_db", r.error.snr_db);
  put(out, ",\"non_finite\":{},\"class\":\"{}\"", r.error.non_finite, name(r.error.quant_class));
}

void type(Out& out, TraceEventKind kind) { put(out, "{{\"type\":\"{}\"", name(kind)); }

void event(Out& out, const TensorRecord& r) {
  type(out, TraceEventKind::Tensor);
  put(out, ",\"name\":\"{}\",\"layer\":{},\"token_pos\":{},\"forward\":{}", r.name.view(), r.layer, r.token_pos,
      r.forward);
  stats(out, r.stats);
}

void event(Out& out, const ActivationRecord& r) {
  type(out, TraceEventKind::Activation);
  put(out, ",\"layer\":{},\"point\":\"{}\",\"token_pos\":{},\"forward\":{}", r.layer, name(r.point), r.token_pos,
      r.forward);
  stats(out, r.stats);
  if (r.residual_ratio) {
    key_number(out, "residual_ratio", *r.residual_ratio);
  } else {
    put(out, ",\"residual_ratio\":null");
  }
}

void event(Out& out, const AttentionRecord& r) {
  type(out, TraceEventKind::Attention);
  const AttentionStats& s = r.stats;
  put(out, ",\"layer\":{},\"head\":{},\"query_pos\":{},\"forward\":{},\"positions\":{},\"top\":[", r.layer, r.head,
      r.query_pos, r.forward, s.positions);
  for (std::uint32_t i = 0; i < s.top_count; ++i) {
    put(out, "{}[{},", i == 0 ? "" : ",", s.top[i].position);
    number(out, s.top[i].weight);
    put(out, "]");
  }
  put(out, "]");
  key_number(out, "total_mass", s.total_mass);
  key_number(out, "tail_mass", s.tail_mass);
  key_number(out, "entropy", s.entropy);
  key_number(out, "recent_mass", s.recent_mass);
  put(out, ",\"invalid\":{}", s.invalid);
  boolean(out, "sink", s.sink);
  boolean(out, "uniform", s.uniform);
  boolean(out, "recency", s.recency);
}

void event(Out& out, const LogitRecord& r) {
  type(out, TraceEventKind::Logits);
  const LogitStats& s = r.stats;
  put(out, ",\"step\":{},\"forward\":{},\"vocab\":{}", r.step, r.forward, s.vocab);
  tokens(out, "top", s.top_tokens());
  key_number(out, "entropy", s.entropy);
  put(out, ",\"chosen\":");
  token(out, s.chosen);
  tokens(out, "tracked", s.tracked_tokens());
  put(out, ",\"invalid\":{}", s.invalid);
  if (r.decisive_layer) {
    put(out, ",\"decisive_layer\":{}", *r.decisive_layer);
  } else {
    put(out, ",\"decisive_layer\":null");
  }
}

void event(Out& out, const LayerLogitRecord& r) {
  type(out, TraceEventKind::LayerLogits);
  put(out, ",\"step\":{},\"layer\":{},\"forward\":{},\"chosen\":", r.step, r.layer, r.forward);
  token(out, r.chosen);
  put(out, ",\"top\":");
  token(out, r.top);
}

void event(Out& out, const QuantErrorRecord& r) {
  type(out, TraceEventKind::QuantError);
  put(out, ",");
  quant_fields(out, r);
}

void event(Out& out, const KvCacheState& r) {
  type(out, TraceEventKind::KvCache);
  put(out, ",\"step\":{},\"cells\":{},\"used\":{},\"high_water\":{},\"evictions\":{},\"free_runs\":{},"
      "\"largest_free_run\":{}",
      r.step, r.cells, r.used, r.high_water, r.evictions, r.free_runs, r.largest_free_run);
  key_number(out, "fragmentation", r.fragmentation);
}

void event(Out& out, const AnomalyRecord& r) {
  type(out, TraceEventKind::Anomaly);
  put(out, ",");
  anomaly_fields(out, r.anomaly);
}

void ids(Out& out, std::string_view key, const auto& list) {
  put(out, ",\"{}\":[", key);
  for (std::size_t i = 0; i < list.size(); ++i) put(out, "{}{}", i == 0 ? "" : ",", list[i]);
  put(out, "]");
}

void kinds(Out& out, const TraceKinds& k) {
  put(out, "{{\"tensors\":{}", k.tensors);
  boolean(out, "activations", k.activations);
  boolean(out, "attention", k.attention);
  boolean(out, "logits", k.logits);
  boolean(out, "layer_logits", k.layer_logits);
  boolean(out, "quant_error", k.quant_error);
  boolean(out, "kv_cache", k.kv_cache);
  put(out, "}}");
}

void per_kind(Out& out, std::string_view key, const std::array<std::uint64_t, kTraceEventKinds>& counts) {
  put(out, ",\"{}\":{{", key);
  for (std::size_t i = 0; i < kTraceEventKinds; ++i) {
    put(out, "{}\"{}\":{}", i == 0 ? "" : ",", name(static_cast<TraceEventKind>(i)), counts[i]);
  }
  put(out, "}}");
}

}  // namespace

void append_header(Out& out, const TraceConfig& c) {
  put(out, "{{\"type\":\"header\",\"format\":\"brick.trace\",\"version\":1,\"config\":{{\"level\":\"{}\",\"kinds\":",
      name(c.level));
  if (c.kinds) {
    kinds(out, *c.kinds);
  } else {
    put(out, "null");
  }
  ids(out, "layers", c.layers);
  ids(out, "heads", c.heads);
  put(out, ",\"sample_every\":{}", c.sample_every);
  boolean(out, "anomalies_every_forward", c.anomalies_every_forward);
  put(out, ",\"quant_error_every\":{},\"logit_lens_every\":{}", c.quant_error_every, c.logit_lens_every);
  put(out, ",\"max_records\":{},\"max_bytes\":{},\"histogram\":{{\"bins\":{}", c.max_records, c.max_bytes,
      c.histogram.bins);
  key_number(out, "lo", c.histogram.lo);
  key_number(out, "hi", c.histogram.hi);
  put(out, "}},\"attention\":{{\"top_k\":{}", c.attention.top_k);
  key_number(out, "min_weight", c.attention.min_weight);
  key_number(out, "sink_threshold", c.attention.sink_threshold);
  key_number(out, "uniform_ratio", c.attention.uniform_ratio);
  put(out, ",\"recency_window\":{}", c.attention.recency_window);
  key_number(out, "recency_threshold", c.attention.recency_threshold);
  put(out, "}},\"logit_top_k\":{}", c.logit_top_k);
  ids(out, "tracked_tokens", c.tracked_tokens);
  put(out, ",\"anomaly\":{{\"explosion_abs\":");
  number(out, c.anomaly.explosion_abs);
  key_number(out, "explosion_std", c.anomaly.explosion_std);
  key_number(out, "vanishing_std", c.anomaly.vanishing_std);
  key_number(out, "residual_dominance", c.anomaly.residual_dominance);
  put(out, "}}}}}}");
}

void append_event(Out& out, const TraceEvent& e) {
  std::visit([&](const auto& record) { event(out, record); }, e);
  put(out, "}}");
}

void append_summary(Out& out, const TraceSummary& s) {
  put(out, "{{\"type\":\"summary\",\"forwards\":{},\"sampled_forwards\":{}", s.forwards, s.sampled_forwards);
  per_kind(out, "recorded", s.recorded);
  per_kind(out, "dropped", s.dropped);
  put(out, ",\"anomalous_forwards\":{},\"first_anomaly\":", s.anomalous_forwards);
  if (s.first_anomaly) {
    put(out, "{{");
    anomaly_fields(out, *s.first_anomaly);
    put(out, "}}");
  } else {
    put(out, "null");
  }
  put(out, ",\"attention_sinks\":{},\"attention_uniform\":{},\"attention_recency\":{}", s.attention_sinks,
      s.attention_uniform, s.attention_recency);
  put(out, ",\"quant\":{{\"ok\":{},\"warning\":{},\"critical\":{},\"worst\":", s.quant.ok, s.quant.warning,
      s.quant.critical);
  if (s.quant.worst) {
    put(out, "{{");
    quant_fields(out, *s.quant.worst);
    put(out, "}}");
  } else {
    put(out, "null");
  }
  put(out, "}},\"kv_high_water\":{}}}", s.kv_high_water);
}

}  // namespace brick::trace::detail
