#include "brick/runtime/simd_config/unroll_config.hpp"

#include "brick/core/error.hpp"

namespace brick {

SimdLevel simd_level(Backend backend) {
  switch (backend) {
    case Backend::Scalar: return SimdLevel::Scalar;
    case Backend::Avx2: return SimdLevel::Avx2;
    case Backend::Avx512: return SimdLevel::Avx512;
    case Backend::Auto: break;
  }
  throw InvalidArgument("simd_level: Backend::Auto has no SIMD level; resolve() it to a concrete backend first");
}

}  // namespace brick
