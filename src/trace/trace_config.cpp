#include "brick/trace/trace_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "brick/core/error.hpp"
#include "brick/trace/logit_stats.hpp"

namespace brick::trace {

std::string_view name(TraceLevel level) noexcept {
  switch (level) {
    case TraceLevel::Off:
      return "off";
    case TraceLevel::Lightweight:
      return "lightweight";
    case TraceLevel::Full:
      return "full";
  }
  return "unknown";
}

std::optional<TraceLevel> parse_trace_level(std::string_view text) noexcept {
  for (const TraceLevel level : {TraceLevel::Off, TraceLevel::Lightweight, TraceLevel::Full}) {
    const std::string_view n = name(level);
    if (std::equal(text.begin(), text.end(), n.begin(), n.end(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == b;
        })) {
      return level;
    }
  }
  return std::nullopt;
}

TraceKinds default_kinds(TraceLevel level) noexcept {
  switch (level) {
    case TraceLevel::Off:
      return {};
    case TraceLevel::Lightweight:
      return TraceKinds{.tensors = true, .activations = true};
    case TraceLevel::Full:
      return TraceKinds{true, true, true, true, true, true, true};
  }
  return {};
}

TraceKinds TraceConfig::effective_kinds() const noexcept {
  if (level == TraceLevel::Off) return {};
  return kinds.value_or(default_kinds(level));
}

void TraceConfig::validate() const {
  if (level != TraceLevel::Off && level != TraceLevel::Lightweight && level != TraceLevel::Full) {
    throw InvalidArgument(fmt::format("trace config: level {} is not a TraceLevel", static_cast<int>(level)));
  }
  for (const auto& [every, field] : {std::pair{sample_every, "sample_every"},
                                     std::pair{quant_error_every, "quant_error_every"},
                                     std::pair{logit_lens_every, "logit_lens_every"}}) {
    if (every == 0) throw InvalidArgument(fmt::format("trace config: {} 0; expected at least 1 (every forward)", field));
  }
  if (max_records == 0 || max_bytes == 0) {
    throw InvalidArgument("trace config: max_records and max_bytes must both be at least 1");
  }
  for (const auto* filter : {&layers, &heads}) {
    for (const std::uint32_t id : *filter) {
      if (id >= kMaxFilterId) {
        throw InvalidArgument(fmt::format("trace config: {} filter id {}; expected below {}",
                                          filter == &layers ? "layer" : "head", id, kMaxFilterId));
      }
    }
  }
  histogram.validate();
  attention.validate();
  if (logit_top_k == 0 || logit_top_k > kMaxLogitTopK) {
    throw InvalidArgument(fmt::format("trace config: logit_top_k {}; expected 1 to {}", logit_top_k, kMaxLogitTopK));
  }
  if (tracked_tokens.size() > kMaxTrackedTokens) {
    throw InvalidArgument(fmt::format("trace config: {} tracked tokens; at most {}", tracked_tokens.size(),
                                      kMaxTrackedTokens));
  }
  if (std::any_of(tracked_tokens.begin(), tracked_tokens.end(), [](std::int32_t t) { return t < 0; })) {
    throw InvalidArgument("trace config: a negative tracked token id");
  }
  for (const double threshold : {anomaly.explosion_abs, anomaly.explosion_std, anomaly.vanishing_std,
                                 anomaly.residual_dominance}) {
    if (!std::isfinite(threshold) || threshold <= 0.0) {
      throw InvalidArgument(fmt::format("trace config: anomaly threshold {}; expected a finite value > 0", threshold));
    }
  }
}

}  // namespace brick::trace
