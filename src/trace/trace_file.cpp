#include "brick/trace/trace_file.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <span>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/regular_file.hpp"
#include "trace/trace_json.hpp"

namespace brick::trace {
namespace {

using Json = nlohmann::json;
constexpr std::size_t kMaxTraceBytes = std::size_t{1} << 30;

// One object of a line, with the path that names it in errors ("trace.jsonl:3: stats.count").
class Fields {
 public:
  Fields(const Json& value, std::string where, std::string path) : value_(value), where_(std::move(where)), path_(std::move(path)) {
    if (!value_.is_object()) fail_here("an object");
  }

  [[noreturn]] void fail(std::string_view key, std::string_view expected) const {
    throw FormatError(fmt::format("{}: {}{}: expected {}", where_, path_, key, expected));
  }

  const Json& field(std::string_view key) const {
    const auto it = value_.find(key);
    if (it == value_.end()) throw FormatError(fmt::format("{}: {}{}: missing", where_, path_, key));
    return *it;
  }
  bool is_null(std::string_view key) const { return field(key).is_null(); }
  bool has(std::string_view key) const { return value_.contains(key); }

  Fields object(std::string_view key) const { return Fields(field(key), where_, fmt::format("{}{}.", path_, key)); }
  const Json& array(std::string_view key) const {
    const Json& v = field(key);
    if (!v.is_array()) fail(key, "an array");
    return v;
  }
  Fields element(std::string_view key, std::size_t i) const {
    return Fields(array(key)[i], where_, fmt::format("{}{}[{}].", path_, key, i));
  }
  std::string string(std::string_view key) const {
    const Json& v = field(key);
    if (!v.is_string()) fail(key, "a string");
    return v.get<std::string>();
  }
  bool boolean(std::string_view key) const {
    const Json& v = field(key);
    if (!v.is_boolean()) fail(key, "true or false");
    return v.get<bool>();
  }
  std::uint64_t unsigned_integer(std::string_view key, std::uint64_t max = UINT64_MAX) const {
    return to_unsigned(field(key), key, max);
  }
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max) const {
    const Json& v = field(key);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::max<std::int64_t>(max, 0)) &&
        static_cast<std::int64_t>(v.get<std::uint64_t>()) >= min) {
      return static_cast<std::int64_t>(v.get<std::uint64_t>());
    }
    if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() >= min && v.get<std::int64_t>() <= max) {
      return v.get<std::int64_t>();
    }
    fail(key, fmt::format("a whole number from {} to {}", min, max));
  }
  std::uint32_t u32(std::string_view key) const {
    return static_cast<std::uint32_t>(unsigned_integer(key, std::numeric_limits<std::uint32_t>::max()));
  }
  double number(std::string_view key) const {
    const Json& v = field(key);
    if (!v.is_number()) fail(key, "a finite number");
    return v.get<double>();
  }
  std::uint64_t to_unsigned(const Json& v, std::string_view key, std::uint64_t max) const {
    if (v.is_number_unsigned() && v.get<std::uint64_t>() <= max) return v.get<std::uint64_t>();
    if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() >= 0 &&
        static_cast<std::uint64_t>(v.get<std::int64_t>()) <= max) {
      return static_cast<std::uint64_t>(v.get<std::int64_t>());
    }
    fail(key, fmt::format("a whole number from 0 to {}", max));
  }
  template <class Parse>
  auto named(std::string_view key, Parse parse, std::string_view expected) const {
    const auto parsed = parse(string(key));
    if (!parsed) fail(key, expected);
    return *parsed;
  }

 private:
  [[noreturn]] void fail_here(std::string_view expected) const {
    throw FormatError(fmt::format("{}: {}: expected {}", where_, path_.empty() ? "the line" : path_, expected));
  }

  const Json& value_;
  std::string where_;
  std::string path_;
};

TraceName read_name(const Fields& f, std::string_view key) {
  try {
    return TraceName(f.string(key));
  } catch (const InvalidArgument& error) {
    f.fail(key, error.what());
  }
}

TensorStats read_stats(const Fields& f) {
  TensorStats s;
  s.count = f.unsigned_integer("count");
  s.min = f.number("min");
  s.max = f.number("max");
  s.mean = f.number("mean");
  s.std = f.number("std");
  s.l2_norm = f.number("l2_norm");
  s.nan_count = f.unsigned_integer("nan");
  s.inf_count = f.unsigned_integer("inf");
  if (f.has("histogram")) {
    const Fields h = f.object("histogram");
    Histogram& histogram = s.histogram;
    histogram.spec = HistogramSpec{h.unsigned_integer("bins", kMaxHistogramBins), h.number("lo"), h.number("hi")};
    try {
      histogram.spec.validate();
    } catch (const InvalidArgument& error) {
      h.fail("bins", error.what());
    }
    const Json& counts = h.array("counts");
    if (counts.size() != histogram.spec.bins) h.fail("counts", fmt::format("{} counts", histogram.spec.bins));
    for (std::size_t i = 0; i < counts.size(); ++i) histogram.counts[i] = h.to_unsigned(counts[i], "counts", UINT64_MAX);
    histogram.below = h.unsigned_integer("below");
    histogram.above = h.unsigned_integer("above");
  }
  return s;
}

TokenLogit read_token(const Fields& f) {
  return TokenLogit{static_cast<std::int32_t>(f.integer("token", 0, std::numeric_limits<std::int32_t>::max())),
                    f.number("logit"), f.number("probability"), f.u32("rank")};
}

template <std::size_t N>
std::uint32_t read_tokens(const Fields& f, std::string_view key, std::array<TokenLogit, N>& out) {
  const std::size_t n = f.array(key).size();
  if (n > N) f.fail(key, fmt::format("at most {} tokens", N));
  for (std::size_t i = 0; i < n; ++i) out[i] = read_token(f.element(key, i));
  return static_cast<std::uint32_t>(n);
}

Anomaly read_anomaly(const Fields& f) {
  Anomaly a;
  a.kind = f.named("kind", parse_anomaly_kind, "an anomaly kind");
  a.layer = f.u32("layer");
  a.point = f.named("point", parse_activation_point, "an activation point");
  a.token_pos = f.integer("token_pos", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
  a.forward = f.unsigned_integer("forward");
  a.value = f.number("value");
  return a;
}

QuantErrorRecord read_quant(const Fields& f) {
  QuantErrorRecord r;
  r.brick = read_name(f, "brick");
  r.layer = f.u32("layer");
  r.error.count = f.unsigned_integer("count");
  r.error.mse = f.number("mse");
  r.error.max_abs_error = f.number("max_abs_error");
  r.error.cosine = f.number("cosine");
  r.error.snr_db = f.number("snr_db");
  r.error.non_finite = f.unsigned_integer("non_finite");
  r.error.quant_class = f.named("class", parse_quant_class, "ok, warning or critical");
  return r;
}

std::int64_t position(const Fields& f, std::string_view key) {
  return f.integer(key, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max());
}

TraceEvent read_event(const Fields& f, TraceEventKind kind) {
  switch (kind) {
    case TraceEventKind::Tensor:
      return TensorRecord{read_name(f, "name"),
                          static_cast<std::int32_t>(f.integer("layer", -1, std::numeric_limits<std::int32_t>::max())),
                          position(f, "token_pos"), f.unsigned_integer("forward"), read_stats(f.object("stats"))};
    case TraceEventKind::Activation: {
      ActivationRecord r{f.u32("layer"), f.named("point", parse_activation_point, "an activation point"),
                         position(f, "token_pos"), f.unsigned_integer("forward"), read_stats(f.object("stats")),
                         std::nullopt};
      if (!f.is_null("residual_ratio")) r.residual_ratio = f.number("residual_ratio");
      return r;
    }
    case TraceEventKind::Attention: {
      AttentionRecord r{f.u32("layer"), f.u32("head"), position(f, "query_pos"), f.unsigned_integer("forward"), {}};
      AttentionStats& s = r.stats;
      s.positions = f.u32("positions");
      const Json& top = f.array("top");
      if (top.size() > kMaxAttentionTopK) f.fail("top", fmt::format("at most {} positions", kMaxAttentionTopK));
      for (const Json& entry : top) {
        if (!entry.is_array() || entry.size() != 2 || !entry[1].is_number()) f.fail("top", "[position, weight] pairs");
        s.top[s.top_count++] = WeightedPosition{static_cast<std::uint32_t>(f.to_unsigned(entry[0], "top", UINT32_MAX)),
                                                entry[1].get<double>()};
      }
      s.total_mass = f.number("total_mass");
      s.tail_mass = f.number("tail_mass");
      s.entropy = f.number("entropy");
      s.recent_mass = f.number("recent_mass");
      s.invalid = f.u32("invalid");
      s.sink = f.boolean("sink");
      s.uniform = f.boolean("uniform");
      s.recency = f.boolean("recency");
      return r;
    }
    case TraceEventKind::Logits: {
      LogitRecord r{f.unsigned_integer("step"), f.unsigned_integer("forward"), {}, std::nullopt};
      LogitStats& s = r.stats;
      s.vocab = f.u32("vocab");
      s.top_count = read_tokens(f, "top", s.top);
      s.entropy = f.number("entropy");
      s.chosen = read_token(f.object("chosen"));
      s.tracked_count = read_tokens(f, "tracked", s.tracked);
      s.invalid = f.u32("invalid");
      if (!f.is_null("decisive_layer")) r.decisive_layer = f.u32("decisive_layer");
      return r;
    }
    case TraceEventKind::LayerLogits:
      return LayerLogitRecord{f.unsigned_integer("step"), f.u32("layer"), f.unsigned_integer("forward"),
                              read_token(f.object("chosen")), read_token(f.object("top"))};
    case TraceEventKind::QuantError:
      return read_quant(f);
    case TraceEventKind::KvCache:
      return KvCacheState{f.unsigned_integer("step"),      f.unsigned_integer("cells"),
                          f.unsigned_integer("used"),      f.unsigned_integer("high_water"),
                          f.unsigned_integer("evictions"), f.unsigned_integer("free_runs"),
                          f.unsigned_integer("largest_free_run"), f.number("fragmentation")};
    case TraceEventKind::Anomaly:
      return AnomalyRecord{read_anomaly(f)};
    case TraceEventKind::COUNT:
      break;
  }
  f.fail("type", "an event type");
}

template <class T>
std::vector<T> read_ids(const Fields& f, std::string_view key, std::uint64_t max) {
  std::vector<T> ids;
  for (const Json& id : f.array(key)) ids.push_back(static_cast<T>(f.to_unsigned(id, key, max)));
  return ids;
}

TraceConfig read_config(const Fields& f) {
  TraceConfig c;
  c.level = f.named("level", parse_trace_level, "off, lightweight or full");
  if (!f.is_null("kinds")) {
    const Fields k = f.object("kinds");
    c.kinds = TraceKinds{k.boolean("tensors"),      k.boolean("activations"), k.boolean("attention"),
                         k.boolean("logits"),       k.boolean("layer_logits"), k.boolean("quant_error"),
                         k.boolean("kv_cache")};
  }
  c.layers = read_ids<std::uint32_t>(f, "layers", kMaxFilterId - 1);
  c.heads = read_ids<std::uint32_t>(f, "heads", kMaxFilterId - 1);
  c.sample_every = f.unsigned_integer("sample_every");
  c.anomalies_every_forward = f.boolean("anomalies_every_forward");
  c.quant_error_every = f.unsigned_integer("quant_error_every");
  c.logit_lens_every = f.unsigned_integer("logit_lens_every");
  c.max_records = f.unsigned_integer("max_records");
  c.max_bytes = f.unsigned_integer("max_bytes");
  const Fields h = f.object("histogram");
  c.histogram = HistogramSpec{h.unsigned_integer("bins"), h.number("lo"), h.number("hi")};
  const Fields a = f.object("attention");
  c.attention = AttentionOptions{a.unsigned_integer("top_k"),          a.number("min_weight"),
                                 a.number("sink_threshold"),           a.number("uniform_ratio"),
                                 a.unsigned_integer("recency_window"), a.number("recency_threshold")};
  c.logit_top_k = f.unsigned_integer("logit_top_k");
  c.tracked_tokens = read_ids<std::int32_t>(f, "tracked_tokens", std::numeric_limits<std::int32_t>::max());
  const Fields t = f.object("anomaly");
  c.anomaly = AnomalyThresholds{t.number("explosion_abs"), t.number("explosion_std"), t.number("vanishing_std"),
                                t.number("residual_dominance")};
  try {
    c.validate();
  } catch (const InvalidArgument& error) {
    f.fail("", error.what());
  }
  return c;
}

std::array<std::uint64_t, kTraceEventKinds> read_per_kind(const Fields& f) {
  std::array<std::uint64_t, kTraceEventKinds> counts{};
  for (std::size_t i = 0; i < kTraceEventKinds; ++i) counts[i] = f.unsigned_integer(name(static_cast<TraceEventKind>(i)));
  return counts;
}

TraceSummary read_summary(const Fields& f) {
  TraceSummary s;
  s.forwards = f.unsigned_integer("forwards");
  s.sampled_forwards = f.unsigned_integer("sampled_forwards");
  s.recorded = read_per_kind(f.object("recorded"));
  s.dropped = read_per_kind(f.object("dropped"));
  s.anomalous_forwards = f.unsigned_integer("anomalous_forwards");
  if (!f.is_null("first_anomaly")) s.first_anomaly = read_anomaly(f.object("first_anomaly"));
  s.attention_sinks = f.unsigned_integer("attention_sinks");
  s.attention_uniform = f.unsigned_integer("attention_uniform");
  s.attention_recency = f.unsigned_integer("attention_recency");
  const Fields q = f.object("quant");
  s.quant.ok = q.unsigned_integer("ok");
  s.quant.warning = q.unsigned_integer("warning");
  s.quant.critical = q.unsigned_integer("critical");
  if (!q.is_null("worst")) s.quant.worst = read_quant(q.object("worst"));
  s.kv_high_water = f.unsigned_integer("kv_high_water");
  return s;
}

}  // namespace

std::string header_json(const TraceConfig& config) {
  fmt::memory_buffer out;
  detail::append_header(out, config);
  return fmt::to_string(out);
}

std::string to_json(const TraceEvent& event) {
  fmt::memory_buffer out;
  detail::append_event(out, event);
  return fmt::to_string(out);
}

std::string to_json(const TraceSummary& summary) {
  fmt::memory_buffer out;
  detail::append_summary(out, summary);
  return fmt::to_string(out);
}

TraceFile parse_trace(std::string_view text, std::string_view what) {
  TraceFile file;
  bool header = false;
  std::size_t line_number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", what, line_number);
    const Json json = Json::parse(line, nullptr, false);
    if (json.is_discarded()) throw FormatError(fmt::format("{}: not a JSON object", where));
    const Fields f(json, where, "");
    const std::string type = f.string("type");
    if (file.summary) throw FormatError(fmt::format("{}: a '{}' record after the summary", where, type));
    if (!header) {
      if (type != "header") f.fail("type", "\"header\" on the first line");
      if (f.string("format") != kTraceFormat) f.fail("format", fmt::format("\"{}\"", kTraceFormat));
      if (f.integer("version", 0, INT64_MAX) != kTraceSchemaVersion) {
        f.fail("version", fmt::format("{} (the version this build reads)", kTraceSchemaVersion));
      }
      file.config = read_config(f.object("config"));
      header = true;
    } else if (type == "summary") {
      file.summary = read_summary(f);
    } else {
      const auto kind = parse_trace_event_kind(type);
      if (!kind) f.fail("type", "header, summary or an event type (tensor, activation, attention, ...)");
      file.events.push_back(read_event(f, *kind));
    }
  }
  if (!header) throw FormatError(fmt::format("{}: no header record (an empty trace)", what));
  return file;
}

TraceFile load_trace(const std::filesystem::path& path) {
  const RegularFile file(path);
  if (file.size() > kMaxTraceBytes) {
    throw CapacityError(fmt::format("{}: {} bytes; a trace is read whole, at most {}", path, file.size(), kMaxTraceBytes));
  }
  std::string text(file.size(), '\0');
  file.read_at(0, std::as_writable_bytes(std::span(text.data(), text.size())));
  return parse_trace(text, path.string());
}

}  // namespace brick::trace
