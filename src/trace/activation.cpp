#include "brick/trace/activation.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace brick::trace {
namespace {

constexpr std::array kPointNames = {"input", "after_norm", "after_attention", "after_ffn", "output"};
constexpr std::array kAnomalyNames = {"non_finite", "explosion", "vanishing", "residual_dominance"};

}  // namespace

std::string_view name(ActivationPoint point) noexcept {
  const auto i = static_cast<std::size_t>(point);
  return i < kPointNames.size() ? kPointNames[i] : "unknown";
}

std::optional<ActivationPoint> parse_activation_point(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kPointNames.size(); ++i) {
    if (text == kPointNames[i]) return static_cast<ActivationPoint>(i);
  }
  return std::nullopt;
}

std::string_view name(AnomalyKind kind) noexcept {
  const auto i = static_cast<std::size_t>(kind);
  return i < kAnomalyNames.size() ? kAnomalyNames[i] : "unknown";
}

std::optional<AnomalyKind> parse_anomaly_kind(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kAnomalyNames.size(); ++i) {
    if (text == kAnomalyNames[i]) return static_cast<AnomalyKind>(i);
  }
  return std::nullopt;
}

std::optional<std::pair<AnomalyKind, double>> detect_anomaly(const TensorStats& stats,
                                                             std::optional<double> residual_ratio,
                                                             const AnomalyThresholds& thresholds) noexcept {
  if (!stats.finite()) {
    return std::pair{AnomalyKind::NonFinite, static_cast<double>(stats.nan_count + stats.inf_count)};
  }
  const double max_abs = std::max(std::abs(stats.min), std::abs(stats.max));
  if (max_abs > thresholds.explosion_abs) return std::pair{AnomalyKind::Explosion, max_abs};
  if (stats.std > thresholds.explosion_std) return std::pair{AnomalyKind::Explosion, stats.std};
  if (stats.count >= 2 && stats.std < thresholds.vanishing_std) return std::pair{AnomalyKind::Vanishing, stats.std};
  if (residual_ratio && *residual_ratio > thresholds.residual_dominance) {
    return std::pair{AnomalyKind::ResidualDominance, *residual_ratio};
  }
  return std::nullopt;
}

}  // namespace brick::trace
