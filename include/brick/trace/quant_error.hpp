#pragma once
// QuantError: how far a quantized computation's output is from a reference (e.g. the dequantized
// weights times x against the f32 weights times x, or a brick's output against the f32 model's),
// classed by cosine similarity:
//   Ok        cosine >= 0.995
//   Warning   0.99 <= cosine < 0.995
//   Critical  cosine < 0.99, or any non-finite value in either output
// MSE and max_abs_error are over the element-wise differences, in double. cosine is 1 for two
// all-zero outputs and 0 when exactly one is all zero. snr_db = 10 log10(sum ref^2 / sum err^2),
// kMaxSnrDb when the outputs are equal and 0 when the reference is all zero. Non-finite pairs are
// counted in `non_finite` and left out of the sums.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "brick/trace/trace_name.hpp"

namespace brick::trace {

inline constexpr double kMaxSnrDb = 300.0;
inline constexpr double kQuantOkCosine = 0.995;
inline constexpr double kQuantWarningCosine = 0.99;

enum class QuantClass : std::uint8_t { Ok, Warning, Critical };

std::string_view name(QuantClass c) noexcept;  // "ok", "warning", "critical"
std::optional<QuantClass> parse_quant_class(std::string_view text) noexcept;

struct QuantError {
  std::uint64_t count = 0;
  double mse = 0.0;
  double max_abs_error = 0.0;
  double cosine = 1.0;
  double snr_db = kMaxSnrDb;
  std::uint64_t non_finite = 0;
  QuantClass quant_class = QuantClass::Ok;
  bool operator==(const QuantError&) const = default;
};

QuantClass classify_cosine(double cosine) noexcept;

// InvalidArgument for empty spans or spans of different sizes.
QuantError compute_quant_error(std::span<const float> quantized, std::span<const float> reference);

}  // namespace brick::trace
