// K-quant formats without the oracle: argument checks, the rules the formats define (zero blocks,
// signs of scales, the Q8_K scale and block sums, scales that round to zero) and error bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::BlockQ4K;
using quant::BlockQ5K;
using quant::BlockQ6K;
using quant::BlockQ8K;
using quant::kBlockSize;
using ::testing::HasSubstr;

template <typename Block, typename Quantize>
void expect_size_checks(Quantize quantize, void (*dequantize)(std::span<const Block>, std::span<float>)) {
  std::vector<Block> blocks(2);
  for (const std::size_t n : {0u, 255u, 257u, 256u, 511u, 513u, 768u}) {
    std::vector<float> values(n);
    try {
      quantize(values, blocks);
      ADD_FAILURE() << "quantize accepted " << n << " values for 2 blocks";
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr("256"));
    }
    EXPECT_THROW(dequantize(blocks, values), InvalidArgument) << n;
  }
  std::vector<float> values(512);
  EXPECT_NO_THROW(quantize(values, blocks));
  EXPECT_NO_THROW(dequantize(blocks, values));
  EXPECT_NO_THROW(quantize({}, {}));  // nothing to do is not an error
  EXPECT_NO_THROW(dequantize({}, {}));
}

TEST(KQuantFormat, SizesMustBe256ValuesPerBlock) {
  expect_size_checks<BlockQ4K>(quant::quantize_q4k, quant::dequantize_q4k);
  expect_size_checks<BlockQ5K>(quant::quantize_q5k, quant::dequantize_q5k);
  expect_size_checks<BlockQ6K>(quant::quantize_q6k, quant::dequantize_q6k);
  for (const Backend backend : kConcreteBackends) {
    if (!is_supported(backend)) continue;
    expect_size_checks<BlockQ8K>(
        [backend](std::span<const float> x, std::span<BlockQ8K> out) { quant::quantize_q8k(x, out, backend); },
        quant::dequantize_q8k);
  }
}

template <typename Block>
bool all_zero_bytes(const Block& block) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(&block);
  return std::all_of(bytes, bytes + sizeof(Block), [](unsigned char b) { return b == 0; });
}

// An all-zero block (or all -0.0) is all-zero bytes in every format, whatever was in the output
// before: in particular Q8_K's block sums are 0 (ggml leaves them unwritten).
TEST(KQuantFormat, ZeroBlocksAreZeroBytes) {
  for (const float zero : {0.0f, -0.0f}) {
    const std::vector<float> x(kBlockSize, zero);
    BlockQ4K q4;
    BlockQ5K q5;
    BlockQ6K q6;
    BlockQ8K q8;
    std::memset(&q4, 0xFF, sizeof(q4));
    std::memset(&q5, 0xFF, sizeof(q5));
    std::memset(&q6, 0xFF, sizeof(q6));
    std::memset(&q8, 0xFF, sizeof(q8));
    quant::quantize_q4k(x, {&q4, 1});
    quant::quantize_q5k(x, {&q5, 1});
    quant::quantize_q6k(x, {&q6, 1});
    quant::quantize_q8k(x, {&q8, 1});
    EXPECT_TRUE(all_zero_bytes(q4));
    EXPECT_TRUE(all_zero_bytes(q5));
    EXPECT_TRUE(all_zero_bytes(q6));
    EXPECT_TRUE(all_zero_bytes(q8));
  }
}

// Q6_K stores quants with +32, so the zero block dequantizes to 0 * 0 * -32 = -0.0, as in ggml.
TEST(KQuantFormat, ZeroQ6KBlockDequantizesToNegativeZero) {
  const BlockQ6K zero{};
  std::vector<float> y(kBlockSize, 1.0f);
  quant::dequantize_q6k({&zero, 1}, y);
  for (const float v : y) EXPECT_EQ(std::bit_cast<std::uint32_t>(v), 0x80000000u);
}

// Q8_K: the element of largest magnitude maps to -127 (the scale is negative when it is positive),
// every quant is in -127..127, and bsums are the sums of each group of 16 quants.
TEST(KQuantFormat, Q8KScaleSignAndBlockSums) {
  std::vector<float> x = normal(kBlockSize, 3);
  x[37] = 9.0f;
  BlockQ8K q;
  quant::quantize_q8k(x, {&q, 1});
  EXPECT_EQ(q.qs[37], -127);
  EXPECT_FLOAT_EQ(q.d, -9.0f / 127);
  for (std::size_t g = 0; g < 16; ++g) {
    const int sum = std::accumulate(q.qs + 16 * g, q.qs + 16 * g + 16, 0);
    EXPECT_EQ(q.bsums[g], sum) << g;
  }
  EXPECT_GE(*std::min_element(q.qs, q.qs + kBlockSize), -127);
  std::vector<float> y(kBlockSize);
  quant::dequantize_q8k({&q, 1}, y);
  for (std::size_t i = 0; i < kBlockSize; ++i) {
    EXPECT_LE(std::fabs(y[i] - x[i]), std::fabs(q.d) * 0.5001f) << i;
  }
}

// Every backend's quantize_q8k writes the scalar reference's bytes, on inputs that stress each
// step: rounding ties after scaling, several values sharing the largest magnitude (the first one
// sets the sign of the scale), NaNs with payloads (ggml's rounding trick turns them into garbage
// quants, which must be the same garbage), infinities, subnormals and signed zeros.
TEST(KQuantFormat, Q8KEveryBackendWritesTheScalarBytes) {
  constexpr std::size_t kBlocks = 1024;  // most of them plain normal data
  std::vector<float> x = normal(kBlocks * kBlockSize, 17);
  for (std::size_t b = 0; b < kBlocks; ++b) {
    float* block = x.data() + b * kBlockSize;
    switch (b % 16) {
      case 0:  // a ramp: products whose rounding to float decides a .5 tie (as FMA would not)
        for (std::size_t i = 0; i < kBlockSize; ++i) block[i] = (static_cast<float>(i + b) - 384.0f) / 64.0f;
        break;
      case 1:  // the largest magnitude twice, negative first
        block[10] = -50.0f;
        block[200] = 50.0f;
        break;
      case 2:
        block[3] = std::bit_cast<float>(0x7FA01234u);  // signalling NaN with a payload
        block[77] = std::bit_cast<float>(0xFFC0ABCDu);  // negative quiet NaN with a payload
        break;
      case 3:
        block[5] = std::numeric_limits<float>::infinity();
        block[6] = -std::numeric_limits<float>::infinity();
        break;
      case 4:
        for (std::size_t i = 0; i < kBlockSize; ++i) block[i] *= 1e-40f;
        break;
      case 5:
        for (std::size_t i = 0; i < kBlockSize; ++i) block[i] = (i % 2) ? -0.0f : 0.0f;
        block[255] = -1e-45f;
        break;
      case 6:
        for (std::size_t i = 0; i < kBlockSize; ++i) block[i] = std::numeric_limits<float>::quiet_NaN();
        break;
      default:
        break;
    }
  }
  std::vector<BlockQ8K> expected(kBlocks);
  quant::quantize_q8k(x, expected, Backend::Scalar);
  for (const Backend backend : kConcreteBackends) {
    if (!is_supported(backend)) continue;
    std::vector<BlockQ8K> got(kBlocks);
    std::memset(got.data(), 0xA5, kBlocks * sizeof(BlockQ8K));
    quant::quantize_q8k(x, got, backend);
    for (std::size_t b = 0; b < kBlocks; ++b) {
      EXPECT_EQ(std::memcmp(&got[b], &expected[b], sizeof(BlockQ8K)), 0) << name(backend) << " block " << b;
    }
  }
}

// Q6_K scales are signed: each sub-block's fit maps its value of largest magnitude to quant -32, so
// when all of them have the same sign every stored scale is negative and d carries the sign; when
// the signs differ, so do the stored scales.
TEST(KQuantFormat, Q6KScalesAreSigned) {
  const std::vector<float> positive = uniform(kBlockSize, 4, 0.5f, 1.5f);
  std::vector<float> negative(positive.size());
  std::transform(positive.begin(), positive.end(), negative.begin(), [](float v) { return -v; });
  BlockQ6K q;
  quant::quantize_q6k(positive, {&q, 1});
  EXPECT_GT(quant::fp16_to_fp32(q.d), 0.0f);
  for (const std::int8_t s : q.scales) EXPECT_LT(s, 0);
  quant::quantize_q6k(negative, {&q, 1});
  EXPECT_LT(quant::fp16_to_fp32(q.d), 0.0f);
  for (const std::int8_t s : q.scales) EXPECT_LT(s, 0);
  std::vector<float> mixed = positive;
  std::copy_n(negative.begin() + 16, 16, mixed.begin() + 16);  // sub-block 1 negative
  quant::quantize_q6k(mixed, {&q, 1});
  EXPECT_EQ(q.scales[0]<0, q.scales[1]> 0);
}

// A sub-block far quieter than the loudest one gets a stored scale of 0; its quants are then the
// ones its own fit chose (not the zero point 32), and it dequantizes to zero.
TEST(KQuantFormat, Q6KSubBlockWhoseScaleRoundsToZeroKeepsItsFittedQuants) {
  std::vector<float> x = uniform(kBlockSize, 5, -1e-4f, 1e-4f);
  for (std::size_t i = 0; i < 16; ++i) x[i] = (i % 2 ? 1.0f : -1.0f) * (100.0f + i);
  BlockQ6K q;
  quant::quantize_q6k(x, {&q, 1});
  ASSERT_EQ(q.scales[5], 0);
  std::vector<float> y(kBlockSize);
  quant::dequantize_q6k({&q, 1}, y);
  bool any_not_zero_point = false;
  for (std::size_t i = 80; i < 96; ++i) {
    EXPECT_EQ(y[i], 0.0f);
    // Values 80..95 are the low nibbles of ql[16..31] in the first 128-value half.
    const int quant = (q.ql[i - 64] & 0xF) | (((q.qh[i - 64] >> 0) & 3) << 4);
    any_not_zero_point |= quant != 32;
  }
  EXPECT_TRUE(any_not_zero_point);
}

// Round-trip error stays within what 4/5/6/8 bits allow, on data of any scale.
TEST(KQuantFormat, RoundTripErrorIsBounded) {
  for (const float scale : {1e-3f, 1.0f, 1e3f}) {
    const std::vector<float> x = normal(64 * kBlockSize, 6, 0.0f, scale);
    double sum_sq = 0.0;
    for (const float v : x) sum_sq += double(v) * v;
    const double rms = std::sqrt(sum_sq / x.size());
    const auto relative_rmse = [&](const std::vector<float>& y) {
      double err = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i)
        err += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
      return std::sqrt(err / x.size()) / rms;
    };
    std::vector<float> y(x.size());
    std::vector<BlockQ4K> q4(64);
    quant::quantize_q4k(x, q4);
    quant::dequantize_q4k(q4, y);
    EXPECT_LT(relative_rmse(y), 0.08) << "Q4_K at scale " << scale;
    std::vector<BlockQ5K> q5(64);
    quant::quantize_q5k(x, q5);
    quant::dequantize_q5k(q5, y);
    EXPECT_LT(relative_rmse(y), 0.04) << "Q5_K at scale " << scale;
    std::vector<BlockQ6K> q6(64);
    quant::quantize_q6k(x, q6);
    quant::dequantize_q6k(q6, y);
    // At small scales d falls into fp16's subnormal range and loses a few bits.
    EXPECT_LT(relative_rmse(y), 0.03) << "Q6_K at scale " << scale;
    std::vector<BlockQ8K> q8(64);
    quant::quantize_q8k(x, q8);
    quant::dequantize_q8k(q8, y);
    EXPECT_LT(relative_rmse(y), 0.01) << "Q8_K at scale " << scale;
  }
}

// Every adversarial pattern quantizes to finite scales and finite values (huge inputs included:
// ggml's arithmetic then saturates the same way, which the oracle tests check byte for byte).
TEST(KQuantFormat, AdversarialPatternsGiveFiniteValues) {
  for (const auto& pattern : adversarial_patterns(1024, 8)) {
    if (pattern.name == "huge") continue;  // 1e30 exceeds fp16's range: the scales become infinite
    std::vector<float> y(pattern.values.size());
    std::vector<BlockQ4K> q4(4);
    quant::quantize_q4k(pattern.values, q4);
    quant::dequantize_q4k(q4, y);
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }))
        << pattern.name;
    std::vector<BlockQ5K> q5(4);
    quant::quantize_q5k(pattern.values, q5);
    quant::dequantize_q5k(q5, y);
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }))
        << pattern.name;
    std::vector<BlockQ6K> q6(4);
    quant::quantize_q6k(pattern.values, q6);
    quant::dequantize_q6k(q6, y);
    EXPECT_TRUE(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }))
        << pattern.name;
  }
}

}  // namespace
}  // namespace brick::test
