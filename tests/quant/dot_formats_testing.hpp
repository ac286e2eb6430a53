#pragma once
// What the generic dot tests need to know of each weight format of the kernel table: random weight
// and activation rows (every byte pattern the format allows), rows of extreme values, rows whose dot
// product is a small integer that every summation order computes exactly, rows converted from
// floats as the library does it, an independent exact evaluation, and how far a kernel's float
// arithmetic may stray from it (relative to the sum of the terms' magnitudes).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "brick/quant/bf16.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/weight_layout.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/kquant_blocks.hpp"
#include "support/random_data.hpp"

namespace brick::test {

template <class Format>
struct FormatTesting;

// Float summation of n products in lanes: a few roundings per element of a lane, then the reduction.
inline double float_sum_tolerance(std::size_t n) { return (static_cast<double>(n) / 8 + 64) * 0x1p-24; }

// Q4_K, Q5_K, Q6_K against Q8_K: integer block sums are exact, a few float operations per block.
template <class Block>
struct KQuantTesting {
  using Weights = std::vector<Block>;
  using Activations = std::vector<quant::BlockQ8K>;

  static std::vector<std::size_t> lengths() { return {1, 2, 3, 4, 5, 7, 9, 16, 17, 56}; }
  static double tolerance(std::size_t) { return 1e-6; }

  static Weights random_weights(std::size_t blocks, std::uint64_t seed) {
    if constexpr (std::is_same_v<Block, quant::BlockQ4K>) return random_q4k(blocks, seed);
    if constexpr (std::is_same_v<Block, quant::BlockQ5K>) return random_q5k(blocks, seed);
    if constexpr (std::is_same_v<Block, quant::BlockQ6K>) return random_q6k(blocks, seed);
  }
  static Activations random_activations(std::size_t blocks, std::uint64_t seed) { return random_q8k(blocks, seed); }

  // The largest quants and sub-block scales, against -128 or 127 everywhere: the worst case for
  // 16-bit partial sums.
  static Weights extreme_weights(std::size_t blocks) {
    Weights w = random_weights(blocks, 3);
    for (Block& block : w) {
      if constexpr (std::is_same_v<Block, quant::BlockQ6K>) {
        std::fill(std::begin(block.ql), std::end(block.ql), 0xFF);
        std::fill(std::begin(block.qh), std::end(block.qh), 0xFF);
        std::fill(std::begin(block.scales), std::end(block.scales), static_cast<std::int8_t>(-128));
      } else {
        std::fill(std::begin(block.qs), std::end(block.qs), 0xFF);
        std::fill(std::begin(block.scales), std::end(block.scales), 0xFF);
        if constexpr (std::is_same_v<Block, quant::BlockQ5K>) std::fill(std::begin(block.qh), std::end(block.qh), 0xFF);
      }
    }
    return w;
  }
  static Activations extreme_activations(std::size_t blocks, bool negative) {
    return random_q8k(blocks, 9, negative ? -128 : 127, negative ? -128 : 127);
  }

  static ExactDot exact(const Weights& w, const Activations& x) { return exact_dot(w, x); }

  // Unit scales and small quants: the dot product is the integer sum itself.
  static std::pair<Weights, Activations> integer_rows(std::size_t blocks, std::uint64_t seed) {
    Weights w = random_weights(blocks, seed);
    for (Block& block : w) {
      block.d = quant::fp32_to_fp16(1.0f);
      if constexpr (!std::is_same_v<Block, quant::BlockQ6K>) block.dmin = quant::fp32_to_fp16(1.0f);
    }
    Activations x = random_q8k(blocks, seed + 1000, -40, 40);
    for (quant::BlockQ8K& block : x) block.d = 1.0f;
    return {w, x};
  }

  static Weights weights_from(std::span<const float> values) {
    Weights w(values.size() / quant::kBlockSize);
    if constexpr (std::is_same_v<Block, quant::BlockQ4K>) quant::quantize_q4k(values, w);
    if constexpr (std::is_same_v<Block, quant::BlockQ5K>) quant::quantize_q5k(values, w);
    if constexpr (std::is_same_v<Block, quant::BlockQ6K>) quant::quantize_q6k(values, w);
    return w;
  }
  static Activations activations_from(std::span<const float> values) {
    Activations x(values.size() / quant::kBlockSize);
    quant::quantize_q8k(values, x);
    return x;
  }
};

template <>
struct FormatTesting<quant::detail::Q4KFormat> : KQuantTesting<quant::BlockQ4K> {};
template <>
struct FormatTesting<quant::detail::Q5KFormat> : KQuantTesting<quant::BlockQ5K> {};
template <>
struct FormatTesting<quant::detail::Q6KFormat> : KQuantTesting<quant::BlockQ6K> {};

// The interleaved Q4_K, Q5_K and Q6_K formats: the plain format's rows, repacked, against its activations
// permuted (interleave_q8k); the exact values are the plain rows'.
template <class Plain, class Interleaved, void (*kInterleave)(std::span<const Plain>, std::span<Interleaved>),
          void (*kDeinterleave)(std::span<const Interleaved>, std::span<Plain>)>
struct InterleavedTesting {
  using PlainTesting = KQuantTesting<Plain>;
  using Weights = std::vector<Interleaved>;
  using Activations = std::vector<quant::BlockQ8KInterleaved>;

  static Weights interleaved(const std::vector<Plain>& w) {
    Weights out(w.size());
    kInterleave(w, out);
    return out;
  }
  static Activations interleaved(const std::vector<quant::BlockQ8K>& x) {
    Activations out(x.size());
    quant::interleave_q8k(x, out);
    return out;
  }

  static std::vector<std::size_t> lengths() { return PlainTesting::lengths(); }
  static double tolerance(std::size_t blocks) { return PlainTesting::tolerance(blocks); }
  static Weights random_weights(std::size_t blocks, std::uint64_t seed) {
    return interleaved(PlainTesting::random_weights(blocks, seed));
  }
  static Activations random_activations(std::size_t blocks, std::uint64_t seed) {
    return interleaved(PlainTesting::random_activations(blocks, seed));
  }
  static Weights extreme_weights(std::size_t blocks) { return interleaved(PlainTesting::extreme_weights(blocks)); }
  static Activations extreme_activations(std::size_t blocks, bool negative) {
    return interleaved(PlainTesting::extreme_activations(blocks, negative));
  }
  static ExactDot exact(const Weights& w, const Activations& x) {
    std::vector<Plain> plain(w.size());
    kDeinterleave(w, plain);
    std::vector<quant::BlockQ8K> plain_x(x.size());
    quant::deinterleave_q8k(x, plain_x);
    return PlainTesting::exact(plain, plain_x);
  }
  static std::pair<Weights, Activations> integer_rows(std::size_t blocks, std::uint64_t seed) {
    auto [w, x] = PlainTesting::integer_rows(blocks, seed);
    return {interleaved(w), interleaved(x)};
  }
  static Weights weights_from(std::span<const float> values) { return interleaved(PlainTesting::weights_from(values)); }
  static Activations activations_from(std::span<const float> values) {
    return interleaved(PlainTesting::activations_from(values));
  }
};

template <>
struct FormatTesting<quant::detail::Q4KInterleavedFormat>
    : InterleavedTesting<quant::BlockQ4K, quant::BlockQ4KInterleaved, &quant::interleave_q4k, &quant::deinterleave_q4k> {};
template <>
struct FormatTesting<quant::detail::Q5KInterleavedFormat>
    : InterleavedTesting<quant::BlockQ5K, quant::BlockQ5KInterleaved, &quant::interleave_q5k, &quant::deinterleave_q5k> {};
template <>
struct FormatTesting<quant::detail::Q6KInterleavedFormat>
    : InterleavedTesting<quant::BlockQ6K, quant::BlockQ6KInterleaved, &quant::interleave_q6k, &quant::deinterleave_q6k> {};

// Q8_0 against Q8_0: integer block sums exact, each block scaled and accumulated in float lanes.
template <>
struct FormatTesting<quant::detail::Q80Format> {
  using Weights = std::vector<quant::BlockQ80>;
  using Activations = std::vector<quant::BlockQ80>;

  // 33 and 70: blocks past one and two of the AVX2 GEMM's chunks of 32 blocks; 128: four whole chunks.
  static std::vector<std::size_t> lengths() { return {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 70, 128}; }
  static double tolerance(std::size_t blocks) { return float_sum_tolerance(blocks); }

  // Random quants (-128 included) with a finite scale of either sign.
  static Weights random_blocks(std::size_t blocks, std::uint64_t seed, int lo = -128, int hi = 127) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> quant(lo, hi);
    Weights out(blocks);
    for (quant::BlockQ80& block : out) {
      block.d = random_scale(rng, -2e-2f, 2e-2f);
      for (std::int8_t& q : block.qs) q = static_cast<std::int8_t>(quant(rng));
    }
    return out;
  }
  static Weights random_weights(std::size_t blocks, std::uint64_t seed) { return random_blocks(blocks, seed); }
  // Activations from an odd seed hold -128 (over a long row nearly every one does, which sends the
  // kernels to their widened products); from an even seed they keep to -127..127, as
  // quantize_row_q8_0 writes them, so that the GEMM tests meet full tiles of tokens on long rows.
  static Activations random_activations(std::size_t blocks, std::uint64_t seed) {
    return seed % 2 == 1 ? random_blocks(blocks, seed) : random_blocks(blocks, seed, -127, 127);
  }
  static Weights extreme_weights(std::size_t blocks) {
    Weights w = random_blocks(blocks, 3, -128, -128);
    for (quant::BlockQ80& block : w) block.d = quant::fp32_to_fp16(65504.0f);
    return w;
  }
  static Activations extreme_activations(std::size_t blocks, bool negative) {
    Activations x = random_blocks(blocks, 9, negative ? -128 : 127, negative ? -128 : 127);
    for (quant::BlockQ80& block : x) block.d = quant::fp32_to_fp16(65504.0f);
    return x;
  }

  static ExactDot exact(const Weights& w, const Activations& x) {
    ExactDot out;
    for (std::size_t b = 0; b < w.size(); ++b) {
      std::int64_t dot = 0;
      std::int64_t dot_abs = 0;
      for (std::size_t j = 0; j < quant::kQ80BlockSize; ++j) {
        dot += w[b].qs[j] * x[b].qs[j];
        dot_abs += std::abs(w[b].qs[j] * x[b].qs[j]);
      }
      const double scale = static_cast<double>(quant::fp16_to_fp32(w[b].d)) * quant::fp16_to_fp32(x[b].d);
      out.value += scale * static_cast<double>(dot);
      out.magnitude += std::abs(scale) * static_cast<double>(dot_abs);
      out.integer += dot;
    }
    return out;
  }

  static std::pair<Weights, Activations> integer_rows(std::size_t blocks, std::uint64_t seed) {
    Weights w = random_blocks(blocks, seed, -40, 40);
    Activations x = random_blocks(blocks, seed + 1000, -40, 40);
    for (quant::BlockQ80& block : w) block.d = quant::fp32_to_fp16(1.0f);
    for (quant::BlockQ80& block : x) block.d = quant::fp32_to_fp16(1.0f);
    return {w, x};
  }

  static Weights weights_from(std::span<const float> values) {
    Weights w(values.size() / quant::kQ80BlockSize);
    quant::quantize_q8_0(values, w);
    return w;
  }
  static Activations activations_from(std::span<const float> values) {
    Activations x(values.size() / quant::kQ80BlockSize);
    quant::quantize_q8_0_activation(values, x);
    return x;
  }
};

// Q8_0 in groups of 16 blocks: the plain format's rows of 16 blocks per group, grouped; the exact
// values are the plain rows'.
template <>
struct FormatTesting<quant::detail::Q80GroupedFormat> {
  using Plain = FormatTesting<quant::detail::Q80Format>;
  using Weights = std::vector<quant::BlockQ80Group>;
  using Activations = std::vector<quant::BlockQ80Group>;
  static constexpr std::size_t kBlocks = quant::BlockQ80Group::kBlocks;

  static Weights grouped(const std::vector<quant::BlockQ80>& blocks) {
    Weights out(blocks.size() / kBlocks);
    quant::group_q8_0(blocks, out);
    return out;
  }
  static std::vector<quant::BlockQ80> plain(const Weights& groups) {
    std::vector<quant::BlockQ80> out(groups.size() * kBlocks);
    quant::ungroup_q8_0(groups, out);
    return out;
  }

  // 33 groups: past the 32 whose activation side the AVX-VNNI rows kernel computes at once.
  static std::vector<std::size_t> lengths() { return {1, 2, 3, 5, 8, 33}; }
  static double tolerance(std::size_t groups) { return Plain::tolerance(groups * kBlocks); }
  static Weights random_weights(std::size_t groups, std::uint64_t seed) {
    return grouped(Plain::random_weights(groups * kBlocks, seed));
  }
  static Activations random_activations(std::size_t groups, std::uint64_t seed) {
    return grouped(Plain::random_activations(groups * kBlocks, seed));
  }
  static Weights extreme_weights(std::size_t groups) { return grouped(Plain::extreme_weights(groups * kBlocks)); }
  static Activations extreme_activations(std::size_t groups, bool negative) {
    return grouped(Plain::extreme_activations(groups * kBlocks, negative));
  }
  static ExactDot exact(const Weights& w, const Activations& x) { return Plain::exact(plain(w), plain(x)); }
  static std::pair<Weights, Activations> integer_rows(std::size_t groups, std::uint64_t seed) {
    const auto [w, x] = Plain::integer_rows(groups * kBlocks, seed);
    return {grouped(w), grouped(x)};
  }
  static Weights weights_from(std::span<const float> values) { return grouped(Plain::weights_from(values)); }
  static Activations activations_from(std::span<const float> values) {
    return grouped(Plain::activations_from(values));
  }
};

// F16 and BF16 rows: products exact in float, float sums. BF16's vdpbf16ps kernel treats subnormal
// inputs and results as zero, so the terms a subnormal can drop are allowed on top (ExactDot::flushable).
template <class Format, class Half, float (*kToFloat)(Half) noexcept, Half (*kFromFloat)(float) noexcept>
struct HalfTesting {
  using Weights = std::vector<Half>;
  using Activations = std::vector<Half>;

  static std::vector<std::size_t> lengths() { return {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 129, 1000, 4097}; }
  static double tolerance(std::size_t n) { return float_sum_tolerance(n); }
  static Weights halves(std::span<const float> values) {
    Weights out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = kFromFloat(values[i]);
    return out;
  }
  static Weights random_weights(std::size_t n, std::uint64_t seed) { return halves(normal(n, seed, 0.0f, 0.05f)); }
  static Activations random_activations(std::size_t n, std::uint64_t seed) { return halves(normal(n, seed)); }
  static Weights extreme_weights(std::size_t n) { return halves(std::vector<float>(n, 60000.0f)); }
  static Activations extreme_activations(std::size_t n, bool negative) {
    return halves(std::vector<float>(n, negative ? -60000.0f : 60000.0f));
  }
  static ExactDot exact(const Weights& w, const Activations& x) {
    ExactDot out;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double a = kToFloat(w[i]);
      const double b = kToFloat(x[i]);
      out.value += a * b;
      out.magnitude += std::abs(a * b);
      if (std::abs(a) < 0x1p-126 || std::abs(b) < 0x1p-126 || std::abs(a * b) < 0x1p-126) {
        out.flushable += std::abs(a * b) + 0x1p-126;
      }
    }
    return out;
  }
  static std::pair<Weights, Activations> integer_rows(std::size_t n, std::uint64_t seed) {
    const auto [w, x] = integer_values(n, seed);
    return {halves(w), halves(x)};
  }
  static std::pair<std::vector<float>, std::vector<float>> integer_values(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> small(-16, 16);
    std::vector<float> w(n), x(n);
    for (std::size_t i = 0; i < n; ++i) {
      w[i] = static_cast<float>(small(rng));
      x[i] = static_cast<float>(small(rng));
    }
    return {w, x};
  }
};

template <>
struct FormatTesting<quant::detail::F16Format>
    : HalfTesting<quant::detail::F16Format, quant::fp16_t, quant::fp16_to_fp32, quant::fp32_to_fp16_canonical_nan> {
  static Weights weights_from(std::span<const float> values) { return halves(values); }
  static Activations activations_from(std::span<const float> values) {
    Activations x(values.size());
    quant::fp32_to_fp16_activation(values, x);
    return x;
  }
};

template <>
struct FormatTesting<quant::detail::BF16Format>
    : HalfTesting<quant::detail::BF16Format, quant::bf16_t, quant::bf16_to_fp32, quant::fp32_to_bf16> {
  static Weights weights_from(std::span<const float> values) { return halves(values); }
  static Activations activations_from(std::span<const float> values) {
    Activations x(values.size());
    quant::fp32_to_bf16_row(values, x);
    return x;
  }
};

// F32 rows: exact products, float sums.
template <>
struct FormatTesting<quant::detail::F32Format> {
  using Weights = std::vector<float>;
  using Activations = std::vector<float>;

  static std::vector<std::size_t> lengths() { return {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129, 1000, 4097}; }
  static double tolerance(std::size_t n) { return float_sum_tolerance(n); }
  static Weights random_weights(std::size_t n, std::uint64_t seed) { return normal(n, seed, 0.0f, 0.05f); }
  static Activations random_activations(std::size_t n, std::uint64_t seed) { return normal(n, seed); }
  static Weights extreme_weights(std::size_t n) { return Weights(n, 1e18f); }
  static Activations extreme_activations(std::size_t n, bool negative) { return Activations(n, negative ? -1e18f : 1e18f); }
  static ExactDot exact(const Weights& w, const Activations& x) {
    ExactDot out;
    for (std::size_t i = 0; i < w.size(); ++i) {
      out.value += static_cast<double>(w[i]) * x[i];
      out.magnitude += std::abs(static_cast<double>(w[i]) * x[i]);
    }
    return out;
  }
  static std::pair<Weights, Activations> integer_rows(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> small(-16, 16);
    Weights w(n);
    Activations x(n);
    for (std::size_t i = 0; i < n; ++i) {
      w[i] = static_cast<float>(small(rng));
      x[i] = static_cast<float>(small(rng));
    }
    return {w, x};
  }
  static Weights weights_from(std::span<const float> values) { return {values.begin(), values.end()}; }
  static Activations activations_from(std::span<const float> values) { return {values.begin(), values.end()}; }
};

}  // namespace brick::test
