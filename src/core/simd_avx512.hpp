#pragma once
// AVX-512 basics shared by the kernels of every room; include only from *_avx512*.cpp translation
// units. Everything here has internal linkage, so no AVX-512 code can leak into baseline code.
//
// GCC 12 reports the deliberately undefined pass-through operands of its own AVX-512 intrinsics as
// uninitialised at -O3; the warning is about <immintrin.h>, not the code that includes it. (Clang
// has no such warning and would reject the unknown option, hence the guard.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

namespace brick::simd {
namespace {

// Returns v unchanged through an empty asm statement the compiler cannot see into. A product
// passed through it cannot be fused with a later add into an FMA (GCC contracts mul+add under its
// GNU-mode default -ffp-contract=fast), so the result is rounded exactly like the scalar reference.
inline __m512 rounded(__m512 v) noexcept {
  __asm__("" : "+v"(v));
  return v;
}

}  // namespace
}  // namespace brick::simd
