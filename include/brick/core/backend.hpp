#pragma once
// The backends Brick has code for, and how a request for one is resolved at run time.
#include <array>
#include <optional>
#include <string_view>

#include "brick/core/cpu_features.hpp"

namespace brick {

enum class Backend : unsigned char {
  Auto,    // the best backend this CPU supports, or BRICK_BACKEND when set
  Scalar,  // the reference: plain C++, obviously correct, runs everywhere
  Avx2,    // AVX2 + FMA + F16C
  Avx512,  // AVX-512 F + BW + DQ + VL
};

inline constexpr std::array<Backend, 3> kConcreteBackends = {Backend::Scalar, Backend::Avx2,
                                                             Backend::Avx512};

std::string_view name(Backend backend) noexcept;

// Parses "auto", "scalar", "avx2", "avx512" (case-insensitive); nullopt for anything else.
std::optional<Backend> parse_backend(std::string_view text) noexcept;

// The CPU feature this backend needs that `features` lacks, or nullopt when it can run.
std::optional<std::string_view> missing_feature(Backend backend,
                                                const CpuFeatures& features) noexcept;

bool is_supported(Backend backend, const CpuFeatures& features = cpu_features()) noexcept;

// The fastest backend `features` can run.
Backend best_backend(const CpuFeatures& features = cpu_features()) noexcept;

// Resolves a request to a concrete backend. Auto becomes the backend forced by the environment
// variable BRICK_BACKEND (scalar|avx2|avx512) when it is set, else the best supported one. An
// explicit request is honoured as given. Throws BackendUnavailable naming the missing feature when
// the resulting backend cannot run here, and InvalidArgument for a BRICK_BACKEND value it does not
// know or a `requested` value outside the enum.
Backend resolve(Backend requested);
Backend resolve(Backend requested, const CpuFeatures& features,
                std::optional<std::string_view> forced);

}  // namespace brick
