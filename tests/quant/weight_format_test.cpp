// Q8_0, F16 and BF16 formats without the oracle: argument checks with typed errors, the rules the
// conversions define (zero blocks, which rounding each uses, where ggml's NaN rules differ), and
// every backend writing the scalar reference's bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/bf16.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/q8_0.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::BlockQ80;
using quant::kQ80BlockSize;
using ::testing::HasSubstr;

std::vector<Backend> supported_backends() {
  std::vector<Backend> out;
  for (const Backend b : kConcreteBackends) {
    if (is_supported(b)) out.push_back(b);
  }
  return out;
}

TEST(Q8_0Format, SizesMustBe32ValuesPerBlock) {
  std::vector<BlockQ80> blocks(2);
  for (const std::size_t n : {0u, 31u, 33u, 63u, 65u, 96u}) {
    std::vector<float> values(n);
    EXPECT_THROW(quant::quantize_q8_0(values, blocks), InvalidArgument) << n;
    EXPECT_THROW(quant::quantize_q8_0_activation(values, blocks), InvalidArgument) << n;
    EXPECT_THROW(quant::dequantize_q8_0(blocks, values), InvalidArgument) << n;
    try {
      quant::quantize_q8_0(values, blocks);
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("32"));
    }
  }
  std::vector<float> values(64);
  EXPECT_NO_THROW(quant::quantize_q8_0(values, blocks));
  EXPECT_NO_THROW(quant::quantize_q8_0_activation(values, blocks));
  EXPECT_NO_THROW(quant::dequantize_q8_0(blocks, values));
  const std::vector<BlockQ80> x(3);
  EXPECT_THROW(quant::dot_q8_0_q8_0(blocks, x), InvalidArgument);
}

TEST(Q8_0Format, ZeroBlocksAreZeroBytesInBothQuantizers) {
  for (const float zero : {0.0f, -0.0f}) {
    const std::vector<float> x(kQ80BlockSize, zero);
    BlockQ80 weight;
    std::memset(&weight, 0xFF, sizeof weight);
    quant::quantize_q8_0(x, {&weight, 1});
    EXPECT_EQ(weight.d, 0);
    for (const std::int8_t q : weight.qs) EXPECT_EQ(q, 0);
    for (const Backend backend : supported_backends()) {
      BlockQ80 activation;
      std::memset(&activation, 0xFF, sizeof activation);
      quant::quantize_q8_0_activation(x, {&activation, 1}, backend);
      EXPECT_EQ(activation.d, 0) << name(backend);
      for (const std::int8_t q : activation.qs) EXPECT_EQ(q, 0) << name(backend);
    }
  }
}

// With amax = 127 both inverse scales are 1, so x = k + 0.5 is an exact tie: the weight quantizer
// rounds it away from zero (roundf), the activation quantizer to even (ggml-cpu's vroundps).
TEST(Q8_0Format, WeightsRoundTiesAwayFromZeroActivationsToEven) {
  std::vector<float> x(kQ80BlockSize, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;
  x[2] = -2.5f;
  x[3] = 3.5f;
  BlockQ80 weight;
  quant::quantize_q8_0(x, {&weight, 1});
  EXPECT_EQ(weight.qs[1], 3);
  EXPECT_EQ(weight.qs[2], -3);
  EXPECT_EQ(weight.qs[3], 4);
  for (const Backend backend : supported_backends()) {
    BlockQ80 activation;
    quant::quantize_q8_0_activation(x, {&activation, 1}, backend);
    EXPECT_EQ(activation.qs[1], 2) << name(backend);
    EXPECT_EQ(activation.qs[2], -2) << name(backend);
    EXPECT_EQ(activation.qs[3], 4) << name(backend);
    EXPECT_EQ(activation.qs[0], 127) << name(backend);
  }
}

// A NaN the activation quantizer keeps (the last of its lane) makes every quant -128; one it drops
// saturates only its own quant to -128. The weight quantizer turns a NaN quant into 0.
TEST(Q8_0Format, NaNsFollowGgmlsRules) {
  std::vector<float> x = normal(kQ80BlockSize, 4);
  x[27] = std::numeric_limits<float>::quiet_NaN();  // lane 3's last value: the reduction keeps it
  BlockQ80 kept;
  quant::quantize_q8_0_activation(x, {&kept, 1}, Backend::Scalar);
  EXPECT_EQ(kept.d, 0x7E00);
  for (const std::int8_t q : kept.qs) EXPECT_EQ(q, -128);
  x[27] = 0.5f;
  x[3] = std::numeric_limits<float>::quiet_NaN();  // lane 3's first value: dropped
  BlockQ80 dropped;
  quant::quantize_q8_0_activation(x, {&dropped, 1}, Backend::Scalar);
  EXPECT_NE(dropped.d, 0x7E00);
  EXPECT_EQ(dropped.qs[3], -128);
  BlockQ80 weight;
  quant::quantize_q8_0(x, {&weight, 1});
  EXPECT_EQ(weight.qs[3], 0);
}

TEST(Q8_0Format, EveryBackendWritesTheScalarActivationBytes) {
  for (const std::size_t blocks : {1u, 2u, 3u, 17u}) {
    for (const Pattern& pattern : adversarial_patterns(blocks * kQ80BlockSize, blocks)) {
      std::vector<BlockQ80> reference(blocks);
      quant::quantize_q8_0_activation(pattern.values, reference, Backend::Scalar);
      for (const Backend backend : supported_backends()) {
        std::vector<BlockQ80> ours(blocks + 1);
        std::memset(ours.data(), 0x55, ours.size() * sizeof(BlockQ80));
        quant::quantize_q8_0_activation(pattern.values, std::span(ours).first(blocks), backend);
        EXPECT_EQ(std::memcmp(ours.data(), reference.data(), blocks * sizeof(BlockQ80)), 0)
            << pattern.name << " " << name(backend) << " blocks " << blocks;
        const auto* guard = reinterpret_cast<const unsigned char*>(&ours[blocks]);
        EXPECT_EQ(guard[0], 0x55) << "wrote past the end";
      }
    }
  }
}

TEST(HalfFormats, RowConversionsCheckSizes) {
  std::vector<float> floats(8);
  std::vector<std::uint16_t> halves(7);
  EXPECT_THROW(quant::fp32_to_bf16_row(floats, halves), InvalidArgument);
  EXPECT_THROW(quant::bf16_to_fp32_row(halves, floats), InvalidArgument);
  EXPECT_THROW(quant::fp32_to_fp16_activation(floats, halves), InvalidArgument);
  EXPECT_THROW(quant::dot_f16_f16(halves, std::span<const std::uint16_t>(halves).first(6)), InvalidArgument);
  EXPECT_THROW(quant::dot_bf16_bf16(halves, std::span<const std::uint16_t>(halves).first(6)), InvalidArgument);
  EXPECT_EQ(quant::dot_f16_f16({}, {}), 0.0f);
}

TEST(HalfFormats, Bf16RoundsToNearestEvenAndKeepsNaNsQuiet) {
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even below
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, even above
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0x3F808001u)), 0x3F81);
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0x007FFFFFu)), 0x0080);  // subnormals round too
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0x7F800001u)), 0x7FC0);  // signalling NaN, quieted
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0xFFC12345u)), 0xFFC1);
  EXPECT_EQ(quant::fp32_to_bf16(std::bit_cast<float>(0x7F7FFFFFu)), 0x7F80);  // rounds up to infinity
  const std::vector<float> floats = uniform(1000, 3, -1e30f, 1e30f);
  std::vector<quant::bf16_t> reference(floats.size());
  quant::fp32_to_bf16_row(floats, reference, Backend::Scalar);
  for (const Backend backend : supported_backends()) {
    for (const std::size_t n : kAwkwardLengths) {
      if (n > floats.size()) continue;
      std::vector<quant::bf16_t> ours(n + 1, 0xABCD);
      quant::fp32_to_bf16_row(std::span(floats).first(n), std::span(ours).first(n), backend);
      EXPECT_TRUE(std::equal(ours.begin(), ours.begin() + static_cast<std::ptrdiff_t>(n), reference.begin()))
          << name(backend) << " n " << n;
      EXPECT_EQ(ours[n], 0xABCD) << "wrote past the end";
    }
  }
}

// The F16 activation is F16C's conversion, except that ggml-cpu's scalar tail (the last n % 4
// values) makes every NaN the canonical 0x7E00; the weight conversion does that everywhere.
TEST(HalfFormats, F16NaNsAreCanonicalOnlyWhereGgmlMakesThemSo) {
  const float payload_nan = std::bit_cast<float>(0x7FC12345u);
  std::vector<float> x(7, payload_nan);
  for (const Backend backend : supported_backends()) {
    std::vector<quant::fp16_t> out(7);
    quant::fp32_to_fp16_activation(x, out, backend);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(out[i], 0x7E09) << name(backend) << " " << i;
    for (std::size_t i = 4; i < 7; ++i) EXPECT_EQ(out[i], 0x7E00) << name(backend) << " " << i;
  }
  EXPECT_EQ(quant::fp32_to_fp16_canonical_nan(payload_nan), 0x7E00);
  EXPECT_EQ(quant::fp32_to_fp16_canonical_nan(-payload_nan), 0xFE00);
  EXPECT_EQ(quant::fp32_to_fp16_canonical_nan(1.0f), quant::fp32_to_fp16(1.0f));
}

}  // namespace
}  // namespace brick::test
