#pragma once
// Picks the kernel (or set of kernels) for a concrete backend. Baseline code only.
#include "brick/core/backend.hpp"

namespace brick::ops::detail {

// `backend` comes from resolve(): never Auto, and supported by this CPU.
template <class Kernel>
constexpr Kernel pick(Backend backend, Kernel scalar, Kernel avx2, Kernel avx512) noexcept {
  switch (backend) {
    case Backend::Avx512:
      return avx512;
    case Backend::Avx2:
      return avx2;
    case Backend::Auto:
    case Backend::Scalar:
      break;
  }
  return scalar;
}

}  // namespace brick::ops::detail
