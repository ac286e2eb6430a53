#pragma once
// Layer activations at fixed points of a transformer block, and the anomalies they show.
//
// residual_ratio, when the caller passes the residual stream a sublayer's output was added onto
// (x = residual + delta): ||residual|| / (||residual|| + ||x - residual||), in [0, 1]; 1 means the
// sublayer added nothing, 0.5 that it added as much as was there (0 when both norms are 0).
//
// Anomalies, checked in this order on one record (the first that applies is the kind):
//   NonFinite          a NaN or Inf value
//   Explosion          max |x| > explosion_abs (1e6) or std > explosion_std (1e4)
//   Vanishing          std < vanishing_std (1e-6) over at least 2 finite values
//   ResidualDominance  residual_ratio > residual_dominance (0.99)
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "brick/trace/tensor_stats.hpp"

namespace brick::trace {

enum class ActivationPoint : std::uint8_t { Input, AfterNorm, AfterAttention, AfterFfn, Output, COUNT };

std::string_view name(ActivationPoint point) noexcept;  // "input", "after_norm", ...
std::optional<ActivationPoint> parse_activation_point(std::string_view text) noexcept;

enum class AnomalyKind : std::uint8_t { NonFinite, Explosion, Vanishing, ResidualDominance };

std::string_view name(AnomalyKind kind) noexcept;  // "non_finite", "explosion", ...
std::optional<AnomalyKind> parse_anomaly_kind(std::string_view text) noexcept;

struct AnomalyThresholds {
  double explosion_abs = 1e6;
  double explosion_std = 1e4;
  double vanishing_std = 1e-6;
  double residual_dominance = 0.99;
  bool operator==(const AnomalyThresholds&) const = default;
};

struct ActivationRecord {
  std::uint32_t layer = 0;
  ActivationPoint point = ActivationPoint::Input;
  std::int64_t token_pos = 0;
  std::uint64_t forward = 0;  // the tracer's forward index (0 = the first begin_forward)
  TensorStats stats;
  std::optional<double> residual_ratio;
  bool operator==(const ActivationRecord&) const = default;
};

// Where and what went wrong first. `value` is what crossed the threshold (the NaN + Inf count for
// NonFinite, max |x| or std, the residual ratio).
struct Anomaly {
  AnomalyKind kind = AnomalyKind::NonFinite;
  std::uint32_t layer = 0;
  ActivationPoint point = ActivationPoint::Input;
  std::int64_t token_pos = 0;
  std::uint64_t forward = 0;  // the tracer's forward index (0 = the first begin_forward)
  double value = 0.0;
  bool operator==(const Anomaly&) const = default;
};

// The anomaly kind of one record, or nullopt when it is healthy.
std::optional<std::pair<AnomalyKind, double>> detect_anomaly(const TensorStats& stats,
                                                             std::optional<double> residual_ratio,
                                                             const AnomalyThresholds& thresholds) noexcept;

}  // namespace brick::trace
