#include "brick/runtime/simd_config/unroll_config.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {

SimdLevel simd_level(Backend backend) {
  switch (backend) {
    case Backend::Scalar: return SimdLevel::Scalar;
    case Backend::Avx2: return SimdLevel::Avx2;
    case Backend::Avx512: return SimdLevel::Avx512;
    case Backend::Auto:
      throw InvalidArgument("simd_level: Backend::Auto has no SIMD level; resolve() it to a concrete backend first");
  }
  throw InvalidArgument(fmt::format("simd_level: {} is not a Backend", static_cast<int>(backend)));
}

}  // namespace brick
