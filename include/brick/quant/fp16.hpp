#pragma once
// IEEE binary16 <-> binary32, bit-exact: round-to-nearest-even on the way down, subnormals, infinities
// and NaNs kept (a NaN stays a NaN, its sign kept, quiet bit set). These are the portable reference;
// the F16C instructions give the same bits. ggml stores k-quant scales with the same rounding, so a
// scale written here reads back in ggml as the same float.
#include <bit>
#include <cstdint>
#include <span>

#include "brick/quant/kquants.hpp"

namespace brick::quant {

constexpr float fp16_to_fp32(fp16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) {  // infinity or NaN
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0u));
  }
  if (exponent != 0) {
    return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal half: normalise into a float (every half subnormal is a normal float).
  std::uint32_t e = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mantissa & 0x3FFu) << 13));
}

constexpr fp16_t fp32_to_fp16(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t exponent = (bits >> 23) & 0xFFu;
  const std::uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFF) {  // infinity or NaN (quiet, keeping the top payload bits)
    return static_cast<fp16_t>(sign | 0x7C00u | (mantissa ? (0x200u | (mantissa >> 13)) : 0u));
  }
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1F) return static_cast<fp16_t>(sign | 0x7C00u);  // overflow to infinity
  if (e <= 0) {
    if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
    const std::uint32_t full = mantissa | 0x800000u;
    const int shift = 14 - e;
    const std::uint32_t half = full >> shift;
    const std::uint32_t remainder = full & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    const std::uint32_t rounded =
        half + ((remainder > halfway || (remainder == halfway && (half & 1u))) ? 1u : 0u);
    return static_cast<fp16_t>(sign | rounded);
  }
  const std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t remainder = mantissa & 0x1FFFu;
  // A carry out of the mantissa correctly bumps the exponent, up to infinity.
  const std::uint32_t rounded =
      half + ((remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ? 1u : 0u);
  return static_cast<fp16_t>(sign | rounded);
}

// ggml's portable conversion (ggml_fp32_to_fp16_row, what ggml_quantize_chunk writes for F16
// tensors): the rounding above, but every NaN becomes the one quiet NaN 0x7E00 of its sign.
constexpr fp16_t fp32_to_fp16_canonical_nan(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<fp16_t>(((bits >> 16) & 0x8000u) | 0x7E00u);
  return fp32_to_fp16(f);
}

// Whole rows. Backend::Scalar uses the functions above; Avx2 (which implies F16C) and Avx512 use
// the F16C and AVX-512 conversion instructions; Auto picks as resolve() does. Every backend gives the same bits. The spans must
// have the same size (else InvalidArgument).
void fp16_to_fp32_row(std::span<const fp16_t> in, std::span<float> out,
                      Backend backend = Backend::Auto);
void fp32_to_fp16_row(std::span<const float> in, std::span<fp16_t> out,
                      Backend backend = Backend::Auto);

// `rows` rows of `cols` values spaced `in_stride` apart (row r starts at in[r * in_stride]) into
// out back to back (row r at out[r * cols]), the bits of fp16_to_fp32_row on each row, the backend
// resolved once for all of them: a strided view such as one kv head's keys in a cache whose cells
// hold every head. InvalidArgument when in_stride < cols, in is shorter than the last row's end or
// out does not hold rows * cols values.
void fp16_to_fp32_rows(std::span<const fp16_t> in, std::size_t rows, std::size_t cols, std::size_t in_stride,
                       std::span<float> out, Backend backend = Backend::Auto);

// x as ggml-cpu converts it for F16 weights (ggml_cpu_fp32_to_fp16 on x86): fp32_to_fp16_row's bits
// for the first in.size() - in.size() % 4 values (F16C, four or more at a time), and for the last
// in.size() % 4 (its scalar tail) fp32_to_fp16_canonical_nan's. The two differ only for NaNs.
void fp32_to_fp16_activation(std::span<const float> in, std::span<fp16_t> out, Backend backend = Backend::Auto);

// Dot product of two F16 rows of the same length (else InvalidArgument). Products of halves are
// exact in float; every backend but Scalar (double) accumulates them in float.
float dot_f16_f16(std::span<const fp16_t> w, std::span<const fp16_t> x, Backend backend = Backend::Auto);

}  // namespace brick::quant
