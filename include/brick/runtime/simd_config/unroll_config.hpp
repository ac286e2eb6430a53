#pragma once
// Which unroll factor a resolved backend's kernels use.
#include <cstddef>

#include "brick/core/backend.hpp"
#include "brick/runtime/simd_config/unroll.hpp"

namespace brick {

// Scalar -> Scalar, Avx2 -> Avx2, Avx512 -> Avx512. Backend::Auto is not a SIMD level: resolve() it
// first; passing it, or a value outside the enum, throws InvalidArgument.
SimdLevel simd_level(Backend backend);

inline std::size_t unroll_factor(Backend backend) { return unroll_factor(simd_level(backend)); }

}  // namespace brick
