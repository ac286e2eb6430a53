#include "brick/trace/quant_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "brick/core/error.hpp"

namespace brick::trace {

std::string_view name(QuantClass c) noexcept {
  switch (c) {
    case QuantClass::Ok:
      return "ok";
    case QuantClass::Warning:
      return "warning";
    case QuantClass::Critical:
      return "critical";
  }
  return "unknown";
}

std::optional<QuantClass> parse_quant_class(std::string_view text) noexcept {
  for (const QuantClass c : {QuantClass::Ok, QuantClass::Warning, QuantClass::Critical}) {
    if (name(c) == text) return c;
  }
  return std::nullopt;
}

QuantClass classify_cosine(double cosine) noexcept {
  if (cosine >= kQuantOkCosine) return QuantClass::Ok;
  if (cosine >= kQuantWarningCosine) return QuantClass::Warning;
  return QuantClass::Critical;
}

QuantError compute_quant_error(std::span<const float> quantized, std::span<const float> reference) {
  if (quantized.empty() || quantized.size() != reference.size()) {
    throw InvalidArgument(fmt::format("quantization error of {} values against a reference of {}; expected the same "
                                      "number, at least one",
                                      quantized.size(), reference.size()));
  }
  QuantError error;
  double dot = 0.0;
  double q_squares = 0.0;
  double r_squares = 0.0;
  double e_squares = 0.0;
  for (std::size_t i = 0; i < quantized.size(); ++i) {
    const double q = quantized[i];
    const double r = reference[i];
    if (!std::isfinite(q) || !std::isfinite(r)) {
      ++error.non_finite;
      continue;
    }
    const double e = q - r;
    dot += q * r;
    q_squares += q * q;
    r_squares += r * r;
    e_squares += e * e;
    error.max_abs_error = std::max(error.max_abs_error, std::abs(e));
    ++error.count;
  }
  if (error.count > 0) error.mse = e_squares / static_cast<double>(error.count);
  if (q_squares == 0.0 && r_squares == 0.0) {
    error.cosine = 1.0;
  } else if (q_squares == 0.0 || r_squares == 0.0) {
    error.cosine = 0.0;
  } else {
    error.cosine = std::clamp(dot / (std::sqrt(q_squares) * std::sqrt(r_squares)), -1.0, 1.0);
  }
  if (r_squares == 0.0) {
    error.snr_db = 0.0;
  } else if (e_squares == 0.0) {
    error.snr_db = kMaxSnrDb;
  } else {
    error.snr_db = std::min(kMaxSnrDb, 10.0 * std::log10(r_squares / e_squares));
  }
  error.quant_class = error.non_finite > 0 ? QuantClass::Critical : classify_cosine(error.cosine);
  return error;
}

}  // namespace brick::trace
