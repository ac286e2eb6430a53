#pragma once
// <immintrin.h> for the AVX-512 kernels of every room; include only from *_avx512*.cpp translation
// units, instead of <immintrin.h> itself.
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
