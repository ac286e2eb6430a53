#pragma once
// <immintrin.h> for AVX-512 translation units (*_avx512*.cpp). GCC 12 reports the deliberately
// undefined pass-through operands of its own AVX-512 intrinsics as uninitialised at -O3; the
// warning is about the header, not the code that includes it. (Clang has no such warning and would
// reject the unknown option, hence the guard.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
