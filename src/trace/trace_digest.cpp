#include "brick/trace/trace_digest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

namespace brick::trace {
namespace {

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

struct QuantTally {
  BrickQuantError error;
  double snr_sum = 0.0;
};

struct HeadTally {
  HeadAttention head;
  double entropy_sum = 0.0;
};

// Non-finite outputs first, then the lowest cosine.
double badness(const BrickQuantError& e) noexcept { return e.non_finite > 0 ? -2.0 : e.worst_cosine; }

std::string location(const Anomaly& a) {
  return fmt::format("{} at layer {}, {}, token {} (value {:.6g}, forward {})", name(a.kind), a.layer, name(a.point),
                     a.token_pos, a.value, a.forward);
}

// `rows` indices of [0, n), evenly spaced, the first and the last among them.
std::vector<std::size_t> spread(std::size_t n, std::size_t rows) {
  std::vector<std::size_t> picked;
  if (n <= rows) {
    for (std::size_t i = 0; i < n; ++i) picked.push_back(i);
    return picked;
  }
  if (rows == 1) return {0};
  for (std::size_t i = 0; i < rows; ++i) picked.push_back(i * (n - 1) / (rows - 1));
  return picked;
}

}  // namespace

TraceDigest digest_trace(const TraceFile& file) {
  TraceDigest d;
  d.config = file.config;
  d.summary = file.summary;
  std::map<std::pair<std::string, std::uint32_t>, QuantTally> quant;
  std::map<std::pair<std::uint32_t, std::uint32_t>, HeadTally> heads;
  std::map<std::uint64_t, StepLogits> steps;
  for (const TraceEvent& event : file.events) {
    ++d.events[static_cast<std::size_t>(kind(event))];
    std::visit(Overloaded{
                   [&](const AnomalyRecord& r) { d.anomalies.push_back(r.anomaly); },
                   [&](const QuantErrorRecord& r) {
                     QuantTally& t = quant[{std::string(r.brick.view()), r.layer}];
                     BrickQuantError& e = t.error;
                     if (e.samples == 0) {
                       e.brick = r.brick;
                       e.layer = r.layer;
                     }
                     ++e.samples;
                     e.worst_cosine = std::min(e.worst_cosine, r.error.cosine);
                     e.worst_class = std::max(e.worst_class, r.error.quant_class);
                     e.non_finite += r.error.non_finite;
                     t.snr_sum += r.error.snr_db;
                   },
                   [&](const AttentionRecord& r) {
                     HeadTally& t = heads[{r.layer, r.head}];
                     t.head.layer = r.layer;
                     t.head.head = r.head;
                     ++t.head.queries;
                     t.head.sinks += r.stats.sink ? 1 : 0;
                     t.head.uniform += r.stats.uniform ? 1 : 0;
                     t.head.recency += r.stats.recency ? 1 : 0;
                     t.entropy_sum += r.stats.entropy;
                   },
                   [&](const LogitRecord& r) {
                     StepLogits& s = steps[r.step];
                     s.step = r.step;
                     s.entropy = r.stats.entropy;
                     s.chosen = r.stats.chosen;
                     if (r.stats.top_count > 0) s.top = r.stats.top[0];
                     s.decisive_layer = r.decisive_layer;
                   },
                   [&](const KvCacheState& r) { d.kv_high_water = std::max(d.kv_high_water, r.high_water); },
                   [](const auto&) {},
               },
               event);
  }
  for (auto& [key, t] : quant) {
    t.error.mean_snr_db = t.snr_sum / static_cast<double>(t.error.samples);
    d.quant.push_back(t.error);
  }
  std::stable_sort(d.quant.begin(), d.quant.end(),
                   [](const BrickQuantError& a, const BrickQuantError& b) { return badness(a) < badness(b); });
  for (auto& [key, t] : heads) {
    t.head.mean_entropy = t.entropy_sum / static_cast<double>(t.head.queries);
    d.heads.push_back(t.head);
  }
  std::stable_sort(d.heads.begin(), d.heads.end(),
                   [](const HeadAttention& a, const HeadAttention& b) { return a.sinks > b.sinks; });
  for (const auto& [step, s] : steps) d.steps.push_back(s);
  return d;
}

std::string format_trace_digest(const TraceDigest& d, std::size_t rows) {
  rows = std::max<std::size_t>(rows, 1);
  std::string out;
  const auto line = [&out](std::string_view text) {
    out += text;
    out += '\n';
  };
  std::uint64_t events = 0;
  for (const std::uint64_t n : d.events) events += n;
  line(fmt::format("trace: level {}, {} records", name(d.config.level), events));
  if (d.summary) {
    const TraceSummary& s = *d.summary;
    line(fmt::format("  {} forwards ({} sampled), {} records made, {} dropped from the ring, KV cache high water {}",
                     s.forwards, s.sampled_forwards, s.recorded_total(), s.dropped_total(), s.kv_high_water));
  } else {
    line("  no summary record: the trace was not closed; what follows is what the file holds");
  }
  std::string per_kind;
  for (std::size_t k = 0; k < kTraceEventKinds; ++k) {
    if (d.events[k] == 0) continue;
    per_kind += fmt::format("{}{} {}", per_kind.empty() ? "" : ", ", name(static_cast<TraceEventKind>(k)), d.events[k]);
  }
  if (!per_kind.empty()) line("  " + per_kind);

  line("");
  if (d.anomalies.empty()) {
    line("anomalies: none");
  } else {
    line(fmt::format("anomalies: {} forwards had one; the first: {}", d.anomalies.size(),
                     location(d.anomalies.front())));
    for (std::size_t i = 1; i < std::min(d.anomalies.size(), rows); ++i) line("  then " + location(d.anomalies[i]));
    if (d.anomalies.size() > rows) line(fmt::format("  ... {} more", d.anomalies.size() - rows));
  }

  line("");
  if (d.quant.empty()) {
    line("quantization error: not measured (full level, or --trace-quant-every)");
  } else {
    std::array<std::uint64_t, 3> classes{};
    for (const BrickQuantError& e : d.quant) ++classes[static_cast<std::size_t>(e.worst_class)];
    line(fmt::format("quantization error: {} bricks measured; worst class ok {}, warning {}, critical {}",
                     d.quant.size(), classes[0], classes[1], classes[2]));
    line(fmt::format("  {:<28} {:>5} {:>13} {:>9} {:>12} {:>8}", "brick", "layer", "worst cosine", "class",
                     "mean SNR dB", "samples"));
    for (std::size_t i = 0; i < std::min(d.quant.size(), rows); ++i) {
      const BrickQuantError& e = d.quant[i];
      line(fmt::format("  {:<28} {:>5} {:>13.6f} {:>9} {:>12.1f} {:>8}{}", e.brick.view(), e.layer, e.worst_cosine,
                       name(e.worst_class), e.mean_snr_db, e.samples,
                       e.non_finite > 0 ? fmt::format("  ({} non-finite)", e.non_finite) : ""));
    }
  }

  line("");
  if (d.heads.empty()) {
    line("attention: not traced (full level)");
  } else {
    std::uint64_t queries = 0, sinks = 0, uniform = 0, recency = 0;
    for (const HeadAttention& h : d.heads) {
      queries += h.queries;
      sinks += h.sinks;
      uniform += h.uniform;
      recency += h.recency;
    }
    line(fmt::format("attention: {} queries over {} heads; sinks {}, near-uniform {}, recency-biased {}", queries,
                     d.heads.size(), sinks, uniform, recency));
    line(fmt::format("  {:>5} {:>5} {:>8} {:>7} {:>8} {:>8} {:>13}", "layer", "head", "queries", "sinks", "uniform",
                     "recency", "mean entropy"));
    for (std::size_t i = 0; i < std::min(d.heads.size(), rows); ++i) {
      const HeadAttention& h = d.heads[i];
      line(fmt::format("  {:>5} {:>5} {:>8} {:>7} {:>8} {:>8} {:>13.3f}", h.layer, h.head, h.queries, h.sinks,
                       h.uniform, h.recency, h.mean_entropy));
    }
  }

  line("");
  if (d.steps.empty()) {
    line("logits: not traced (full level)");
  } else {
    double lo = d.steps.front().entropy, hi = lo, sum = 0.0;
    for (const StepLogits& s : d.steps) {
      lo = std::min(lo, s.entropy);
      hi = std::max(hi, s.entropy);
      sum += s.entropy;
    }
    line(fmt::format("logits: {} steps; entropy (nats) min {:.3f}, mean {:.3f}, max {:.3f}", d.steps.size(), lo,
                     sum / static_cast<double>(d.steps.size()), hi));
    line(fmt::format("  {:>6} {:>8} {:>8} {:>10} {:>6} {:>8} {:>9}", "step", "entropy", "chosen", "p(chosen)", "rank",
                     "top", "decisive"));
    for (const std::size_t i : spread(d.steps.size(), rows)) {
      const StepLogits& s = d.steps[i];
      line(fmt::format("  {:>6} {:>8.3f} {:>8} {:>10.4f} {:>6} {:>8} {:>9}", s.step, s.entropy, s.chosen.token,
                       s.chosen.probability, s.chosen.rank, s.top.token,
                       s.decisive_layer ? fmt::format("layer {}", *s.decisive_layer) : std::string("-")));
    }
  }
  return out;
}

}  // namespace brick::trace
