#pragma once
// The AVX-512 F16·F16 and BF16·BF16 kernels on the row loops of dot_rows_avx512_impl.hpp. Products
// of two 16-bit floats are exact in float, so the only rounding is the float accumulation.
// - F16Dot: 32 halves per step, widened with vcvtph2ps (the activation once for all the rows).
// - BF16Dot: 32 bf16 per step; interleaving them with zeros (vpunpcklwd / vpunpckhwd) gives two
//   vectors of 16 floats, in an order that is the same for the weights and the activation.
// - BF16DotPairs (AVX-512 BF16): 64 bf16 per step, vdpbf16ps adding two products per float lane.
//   It treats subnormal inputs and results as zero and rounds to nearest even.
// Tails are masked loads, which read nothing past the rows.
#include <cstddef>
#include <cstdint>

#include "brick/quant/bf16.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kernels/dot_rows_avx512_impl.hpp"

namespace brick::quant::kernels {
namespace {

// The mask of the first `n` of 16 (or of 32) 16-bit lanes, n at most the lane count.
inline __mmask16 first_lanes16(std::size_t n) { return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1); }
inline __mmask32 first_lanes32(std::size_t n) {
  return n >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((std::uint32_t{1} << n) - 1);
}

struct F16Dot {
  static constexpr std::size_t kStep = 32;
  static constexpr std::size_t kVectors = 2;
  struct Activation {
    __m512 values[2];
  };
  static __m512 widen(const fp16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static __m512 widen_first(const fp16_t* p, std::size_t n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(first_lanes16(n), p));
  }
  Activation activation(const fp16_t* x) const { return {{widen(x), widen(x + 16)}}; }
  void accumulate(const fp16_t* w, const Activation& a, __m512 (&acc)[2]) const {
    for (std::size_t v = 0; v < 2; ++v) acc[v] = _mm512_fmadd_ps(widen(w + 16 * v), a.values[v], acc[v]);
  }
  Activation activation_tail(const fp16_t* x, std::size_t left) const {
    return {{widen_first(x, left), widen_first(x + 16, left > 16 ? left - 16 : 0)}};
  }
  void accumulate_tail(const fp16_t* w, const Activation& a, __m512 (&acc)[2], std::size_t left) const {
    acc[0] = _mm512_fmadd_ps(widen_first(w, left), a.values[0], acc[0]);
    acc[1] = _mm512_fmadd_ps(widen_first(w + 16, left > 16 ? left - 16 : 0), a.values[1], acc[1]);
  }
};

struct BF16Dot {
  static constexpr std::size_t kStep = 32;
  static constexpr std::size_t kVectors = 2;
  struct Activation {
    __m512 values[2];
  };
  static Activation widen(__m512i v) {
    const __m512i zero = _mm512_setzero_si512();
    return {{_mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, v)), _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, v))}};
  }
  static void add(const Activation& w, const Activation& a, __m512 (&acc)[2]) {
    for (std::size_t v = 0; v < 2; ++v) acc[v] = _mm512_fmadd_ps(w.values[v], a.values[v], acc[v]);
  }
  Activation activation(const bf16_t* x) const { return widen(_mm512_loadu_si512(x)); }
  void accumulate(const bf16_t* w, const Activation& a, __m512 (&acc)[2]) const { add(activation(w), a, acc); }
  Activation activation_tail(const bf16_t* x, std::size_t left) const {
    return widen(_mm512_maskz_loadu_epi16(first_lanes32(left), x));
  }
  void accumulate_tail(const bf16_t* w, const Activation& a, __m512 (&acc)[2], std::size_t left) const {
    add(activation_tail(w, left), a, acc);
  }
};

// A template so that the translation units without AVX-512 BF16, which never instantiate it, compile.
template <bool kBf16Instructions>
struct BF16DotPairs {
  static_assert(kBf16Instructions);
  static constexpr std::size_t kStep = 64;
  static constexpr std::size_t kVectors = 2;
  struct Activation {
    __m512i values[2];
  };
  static void add(const Activation& w, const Activation& a, __m512 (&acc)[2]) {
    for (std::size_t v = 0; v < 2; ++v) acc[v] = _mm512_dpbf16_ps(acc[v], (__m512bh)w.values[v], (__m512bh)a.values[v]);
  }
  Activation activation(const bf16_t* x) const { return {{_mm512_loadu_si512(x), _mm512_loadu_si512(x + 32)}}; }
  void accumulate(const bf16_t* w, const Activation& a, __m512 (&acc)[2]) const { add(activation(w), a, acc); }
  Activation activation_tail(const bf16_t* x, std::size_t left) const {
    return {{_mm512_maskz_loadu_epi16(first_lanes32(left), x),
             _mm512_maskz_loadu_epi16(first_lanes32(left > 32 ? left - 32 : 0), x + 32)}};
  }
  void accumulate_tail(const bf16_t* w, const Activation& a, __m512 (&acc)[2], std::size_t left) const {
    add(activation_tail(w, left), a, acc);
  }
};

}  // namespace
}  // namespace brick::quant::kernels
