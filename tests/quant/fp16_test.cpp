// fp16 <-> fp32: the row conversions of every backend (portable reference, F16C) give the same bits
// for every half and for floats chosen to hit every rounding case, and agree with ggml's.
#include "brick/quant/fp16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/core/error.hpp"
#include "kquant_testing.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::fp16_t;

std::vector<Backend> supported_backends() {
  std::vector<Backend> backends;
  for (const Backend b : kConcreteBackends) {
    if (is_supported(b)) backends.push_back(b);
  }
  return backends;
}

std::vector<fp16_t> all_halves() {
  std::vector<fp16_t> halves(65536);
  for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = static_cast<fp16_t>(i);
  return halves;
}

// Floats around every rounding decision: each half's value, the exact midpoints between
// neighbouring halves (ties) and the floats one ulp either side of them, the subnormal and overflow
// boundaries, specials (signed zeros, infinities, quiet and signalling NaNs with payloads), and
// random bit patterns.
std::vector<float> probe_floats() {
  std::vector<float> floats;
  const auto next = [](float f, int ulps) {
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) + static_cast<std::uint32_t>(ulps));
  };
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {  // finite non-negative halves
    const float value = quant::fp16_to_fp32(static_cast<fp16_t>(h));
    const float above = quant::fp16_to_fp32(static_cast<fp16_t>(h + 1));
    const float midpoint = value + (above - value) / 2;  // exact: halves have 11 significant bits
    for (const float f : {value, midpoint, next(midpoint, -1), next(midpoint, 1)}) {
      floats.push_back(f);
      floats.push_back(-f);
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (const std::uint32_t bits :
       {0x7F800001u, 0x7FC00000u, 0x7FBFFFFFu, 0x7FFFFFFFu, 0x7F802000u, 0xFFC00001u, 0x00000001u,
        0x00800000u, 0x33000000u, 0x33000001u, 0x477FF000u, 0x477FEFFFu, 0x7F7FFFFFu}) {
    floats.push_back(std::bit_cast<float>(bits));
    floats.push_back(-std::bit_cast<float>(bits));
  }
  floats.insert(floats.end(), {0.0f, -0.0f, inf, -inf, 65504.0f, 65520.0f, -65520.0f});
  std::mt19937 rng(2024);
  for (int i = 0; i < 200000; ++i)
    floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  return floats;
}

TEST(Fp16Rows, EveryHalfConvertsToTheSameFloatOnEveryBackend) {
  const std::vector<fp16_t> halves = all_halves();
  std::vector<float> reference(halves.size());
  for (std::size_t i = 0; i < halves.size(); ++i) reference[i] = quant::fp16_to_fp32(halves[i]);
  for (const Backend backend : supported_backends()) {
    std::vector<float> out(halves.size());
    quant::fp16_to_fp32_row(halves, out, backend);
    EXPECT_EQ(first_bit_difference(out, reference), -1) << name(backend);
  }
}

TEST(Fp16Rows, EveryHalfSurvivesTheRoundTrip) {
  const std::vector<fp16_t> halves = all_halves();
  std::vector<float> floats(halves.size());
  quant::fp16_to_fp32_row(halves, floats, Backend::Scalar);
  for (const Backend backend : supported_backends()) {
    std::vector<fp16_t> back(halves.size());
    quant::fp32_to_fp16_row(floats, back, backend);
    for (std::size_t h = 0; h < halves.size(); ++h) {
      const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
      // A signalling NaN comes back quiet; everything else comes back unchanged.
      const fp16_t expected = static_cast<fp16_t>(nan ? (h | 0x200) : h);
      ASSERT_EQ(back[h], expected) << name(backend) << " half 0x" << std::hex << h;
    }
  }
}

TEST(Fp16Rows, FloatsRoundToNearestEvenOnEveryBackend) {
  const std::vector<float> floats = probe_floats();
  std::vector<fp16_t> reference(floats.size());
  for (std::size_t i = 0; i < floats.size(); ++i) reference[i] = quant::fp32_to_fp16(floats[i]);
  for (const Backend backend : supported_backends()) {
    std::vector<fp16_t> out(floats.size());
    quant::fp32_to_fp16_row(floats, out, backend);
    for (std::size_t i = 0; i < floats.size(); ++i) {
      ASSERT_EQ(out[i], reference[i]) << name(backend) << " float bits 0x" << std::hex
                                      << std::bit_cast<std::uint32_t>(floats[i]);
    }
  }
}

TEST(Fp16Rows, TiesGoToTheEvenHalf) {
  EXPECT_EQ(quant::fp32_to_fp16(1.0f + 1.0f / 2048), 0x3C00);     // 1 + half an ulp: down to even
  EXPECT_EQ(quant::fp32_to_fp16(1.0f + 3.0f / 2048), 0x3C02);     // 1 + 1.5 ulp: up to even
  EXPECT_EQ(quant::fp32_to_fp16(65520.0f), 0x7C00);               // halfway to 2^16 overflows
  EXPECT_EQ(quant::fp32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal
  EXPECT_EQ(quant::fp32_to_fp16(std::ldexp(3.0f, -26)), 0x0001);  // above it
  EXPECT_EQ(quant::fp32_to_fp16(-0.0f), 0x8000);
}

// Tails of every length (the F16C kernel works 8 at a time) and unaligned starts.
TEST(Fp16Rows, AwkwardLengthsAndOffsets) {
  const std::vector<float> source = normal(4097 + 3, 5, 0.0f, 100.0f);
  for (const Backend backend : supported_backends()) {
    for (const std::size_t n : kAwkwardLengths) {
      for (const std::size_t offset : {0u, 1u, 3u}) {
        const std::span<const float> in(source.data() + offset, n);
        std::vector<fp16_t> halves(n + 1, 0xABCD);
        quant::fp32_to_fp16_row(in, std::span<fp16_t>(halves.data(), n), backend);
        EXPECT_EQ(halves[n], 0xABCD) << "wrote past the end";
        std::vector<float> back(n + 1, 42.0f);
        quant::fp16_to_fp32_row(std::span<const fp16_t>(halves.data(), n),
                                std::span<float>(back.data(), n), backend);
        EXPECT_EQ(back[n], 42.0f) << "wrote past the end";
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(halves[i], quant::fp32_to_fp16(in[i]))
              << name(backend) << " n=" << n << " i=" << i;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(back[i]),
                    std::bit_cast<std::uint32_t>(quant::fp16_to_fp32(halves[i])));
        }
      }
    }
  }
}

TEST(Fp16Rows, RejectsMismatchedSizes) {
  std::vector<float> floats(8);
  std::vector<fp16_t> halves(7);
  EXPECT_THROW(quant::fp32_to_fp16_row(floats, halves), InvalidArgument);
  EXPECT_THROW(quant::fp16_to_fp32_row(halves, floats), InvalidArgument);
}

// ggml converts the same way (its portable conversion, used by its reference quantizers), except
// that it turns every NaN into one canonical NaN, so NaNs are compared as NaNs only.
TEST(Fp16Rows, StridedRowsGiveEachRowsBitsOnEveryBackend) {
  // Five rows of 37 halves (a masked tail on every backend), 50 apart: the gaps hold halves that
  // must not be read into the output.
  constexpr std::size_t kRows = 5, kCols = 37, kStride = 50;
  const std::vector<fp16_t> halves = all_halves();
  const std::span<const fp16_t> in = std::span(halves).subspan(1000, (kRows - 1) * kStride + kCols);
  for (const Backend backend : supported_backends()) {
    std::vector<float> out(kRows * kCols, -1.0f);
    quant::fp16_to_fp32_rows(in, kRows, kCols, kStride, out, backend);
    for (std::size_t r = 0; r < kRows; ++r) {
      std::vector<float> row(kCols);
      quant::fp16_to_fp32_row(in.subspan(r * kStride, kCols), row, Backend::Scalar);
      EXPECT_EQ(first_bit_difference(std::span<const float>(out).subspan(r * kCols, kCols), row), -1)
          << name(backend) << " row " << r;
    }
  }
}

TEST(Fp16Rows, StridedRowsRejectShortInputsOutputsAndOverlappingRows) {
  const std::vector<fp16_t> halves(2 * 8 + 4);
  std::vector<float> out(3 * 4);
  EXPECT_NO_THROW(quant::fp16_to_fp32_rows(halves, 3, 4, 8, out));
  EXPECT_THROW(quant::fp16_to_fp32_rows(std::span(halves).first(2 * 8 + 3), 3, 4, 8, out), InvalidArgument);
  EXPECT_THROW(quant::fp16_to_fp32_rows(halves, 3, 4, 8, std::span(out).first(11)), InvalidArgument);
  EXPECT_THROW(quant::fp16_to_fp32_rows(halves, 3, 4, 3, out), InvalidArgument);
}

TEST(Fp16Rows, AgreeWithGgml) {
  const GgmlOracle& oracle = GgmlOracle::load();
  const std::vector<fp16_t> halves = all_halves();
  std::vector<float> ours(halves.size()), ggml(halves.size());
  quant::fp16_to_fp32_row(halves, ours);
  oracle.ggml_fp16_to_fp32_row(halves.data(), ggml.data(),
                               static_cast<std::int64_t>(halves.size()));
  for (std::size_t h = 0; h < halves.size(); ++h) {
    if (std::isnan(ours[h])) {
      ASSERT_TRUE(std::isnan(ggml[h]));
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(ours[h]), std::bit_cast<std::uint32_t>(ggml[h])) << h;
    }
  }
  const std::vector<float> floats = probe_floats();
  std::vector<fp16_t> ours16(floats.size()), ggml16(floats.size());
  quant::fp32_to_fp16_row(floats, ours16);
  oracle.ggml_fp32_to_fp16_row(floats.data(), ggml16.data(),
                               static_cast<std::int64_t>(floats.size()));
  for (std::size_t i = 0; i < floats.size(); ++i) {
    if (std::isnan(floats[i])) {
      ASSERT_EQ(ggml16[i] & 0x7C00, 0x7C00);
      ASSERT_NE(ggml16[i] & 0x3FF, 0);
    } else {
      ASSERT_EQ(ours16[i], ggml16[i])
          << "float bits 0x" << std::hex << std::bit_cast<std::uint32_t>(floats[i]);
    }
  }
}

}  // namespace
}  // namespace brick::test
