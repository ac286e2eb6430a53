#include "brick/core/backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#include "brick/core/error.hpp"

namespace brick {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

constexpr std::array<Backend, 4> kAllBackends = {Backend::Auto, Backend::Scalar, Backend::Avx2, Backend::Avx512};

// Read once: BRICK_BACKEND forces the choice for the whole process.
std::optional<std::string_view> forced_backend_from_environment() {
  static const std::optional<std::string> value = []() -> std::optional<std::string> {
    const char* text = std::getenv("BRICK_BACKEND");
    if (text == nullptr || *text == '\0') return std::nullopt;
    return std::string(text);
  }();
  if (!value) return std::nullopt;
  return std::string_view(*value);
}

}  // namespace

std::string_view name(Backend backend) noexcept {
  switch (backend) {
    case Backend::Auto:
      return "auto";
    case Backend::Scalar:
      return "scalar";
    case Backend::Avx2:
      return "avx2";
    case Backend::Avx512:
      return "avx512";
  }
  return "unknown";
}

std::optional<Backend> parse_backend(std::string_view text) noexcept {
  for (Backend b : kAllBackends) {
    if (iequals(text, name(b))) return b;
  }
  return std::nullopt;
}

std::optional<std::string_view> missing_feature(Backend backend, const CpuFeatures& f) noexcept {
  switch (backend) {
    case Backend::Auto:
    case Backend::Scalar:
      return std::nullopt;
    case Backend::Avx512:
      if (!f.avx512f) return "AVX-512F";
      if (!f.avx512bw) return "AVX-512BW";
      if (!f.avx512dq) return "AVX-512DQ";
      if (!f.avx512vl) return "AVX-512VL";
      [[fallthrough]];
    case Backend::Avx2:
      if (!f.avx2) return "AVX2";
      if (!f.fma) return "FMA";
      if (!f.f16c) return "F16C";
      return std::nullopt;
  }
  return "an unknown backend";
}

bool is_supported(Backend backend, const CpuFeatures& features) noexcept {
  return !missing_feature(backend, features).has_value();
}

Backend best_backend(const CpuFeatures& features) noexcept {
  if (is_supported(Backend::Avx512, features)) return Backend::Avx512;
  if (is_supported(Backend::Avx2, features)) return Backend::Avx2;
  return Backend::Scalar;
}

Backend resolve(Backend requested, const CpuFeatures& features,
                std::optional<std::string_view> forced) {
  if (std::find(kAllBackends.begin(), kAllBackends.end(), requested) == kAllBackends.end()) {
    throw InvalidArgument(fmt::format("{} is not a Backend", static_cast<int>(requested)));
  }
  Backend chosen = requested;
  if (requested == Backend::Auto) {
    if (forced) {
      const auto parsed = parse_backend(*forced);
      if (!parsed) {
        throw InvalidArgument(fmt::format(
            "BRICK_BACKEND='{}' is not a backend; expected scalar, avx2, avx512 or auto", *forced));
      }
      chosen = *parsed;
    }
    if (chosen == Backend::Auto) return best_backend(features);
  }
  if (const auto missing = missing_feature(chosen, features)) {
    throw BackendUnavailable(name(chosen), *missing);
  }
  return chosen;
}

Backend resolve(Backend requested) {
  return resolve(requested, cpu_features(), forced_backend_from_environment());
}

}  // namespace brick
