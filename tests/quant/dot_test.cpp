// Every dot kernel variant against an independent exact evaluation and against the scalar reference,
// on random blocks (every byte pattern), ggml's golden vectors, and bad input.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/dot_kernels.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kquant_blocks.hpp"
#include "support/ggml_golden.hpp"

namespace brick::quant {
namespace {

// Written where no kernel output may go: a kernel that writes past its rows changes it.
constexpr float kSentinel = -12345.0f;

using test::exact_dot;
using test::random_q8k;

struct Q5K {
  using Block = BlockQ5K;
  static constexpr const char* kGgmlName = "q5_K";
  static std::vector<Block> random(std::size_t blocks, std::uint64_t seed) { return test::random_q5k(blocks, seed); }
  static DotQ5KKernel kernel(DotIsa isa) { return dot_q5k_q8k_kernel(isa); }
  static DotQ5KRowsKernel rows_kernel(DotIsa isa) { return dot_q5k_q8k_rows_kernel(isa); }
  static DotQ5KFourRunsKernel four_runs_kernel(DotIsa isa) { return dot_q5k_q8k_four_runs_kernel(isa); }
  static float dot(std::span<const Block> w, std::span<const BlockQ8K> x, Backend b) { return dot_q5k_q8k(w, x, b); }
};

struct Q6K {
  using Block = BlockQ6K;
  static constexpr const char* kGgmlName = "q6_K";
  static std::vector<Block> random(std::size_t blocks, std::uint64_t seed) { return test::random_q6k(blocks, seed); }
  static DotQ6KKernel kernel(DotIsa isa) { return dot_q6k_q8k_kernel(isa); }
  static DotQ6KRowsKernel rows_kernel(DotIsa isa) { return dot_q6k_q8k_rows_kernel(isa); }
  static DotQ6KFourRunsKernel four_runs_kernel(DotIsa isa) { return dot_q6k_q8k_four_runs_kernel(isa); }
  static float dot(std::span<const Block> w, std::span<const BlockQ8K> x, Backend b) { return dot_q6k_q8k(w, x, b); }
};

template <class T>
class DotTest : public ::testing::Test {};
using Formats = ::testing::Types<Q5K, Q6K>;
TYPED_TEST_SUITE(DotTest, Formats);

// Float summation order differs between variants; the integer parts may not.
constexpr double kRelativeTolerance = 1e-6;

std::vector<DotIsa> supported_isas() {
  std::vector<DotIsa> out;
  for (DotIsa isa : kDotIsas) {
    if (is_supported(isa)) out.push_back(isa);
  }
  return out;
}

TYPED_TEST(DotTest, EveryVariantMatchesTheExactValueOnRandomBlocks) {
  for (std::size_t blocks : {1u, 2u, 3u, 7u, 16u, 17u, 56u}) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto w = TypeParam::random(blocks, seed);
      const auto x = random_q8k(blocks, seed * 7919);
      const test::ExactDot expected = exact_dot(w, x);
      for (DotIsa isa : supported_isas()) {
        const float got = TypeParam::kernel(isa)(w.data(), x.data(), blocks);
        EXPECT_NEAR(got, expected.value, kRelativeTolerance * expected.magnitude)
            << name(isa) << " blocks=" << blocks << " seed=" << seed;
      }
    }
  }
}

TYPED_TEST(DotTest, IntegerPartsAreExact) {
  // With every float scale 1 the result is the integer sum itself, small enough for a float.
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    auto w = TypeParam::random(2, seed);
    auto x = random_q8k(2, seed + 1000, -40, 40);
    for (auto& block : w) {
      block.d = fp32_to_fp16(1.0f);
      if constexpr (std::is_same_v<TypeParam, Q5K>) block.dmin = fp32_to_fp16(1.0f);
    }
    for (auto& block : x) block.d = 1.0f;
    const test::ExactDot expected = exact_dot(w, x);
    ASSERT_LT(std::abs(expected.integer), 1 << 24);
    for (DotIsa isa : supported_isas()) {
      EXPECT_EQ(TypeParam::kernel(isa)(w.data(), x.data(), w.size()), static_cast<float>(expected.integer))
          << name(isa) << " seed=" << seed;
    }
  }
}

TYPED_TEST(DotTest, ExtremeQuantsDoNotSaturate) {
  // Largest weight quants against -128 and 127 activations: the worst case for 16-bit pair sums.
  auto w = TypeParam::random(4, 3);
  for (auto& block : w) {
    if constexpr (std::is_same_v<TypeParam, Q5K>) {
      std::fill(std::begin(block.qs), std::end(block.qs), 0xFF);
      std::fill(std::begin(block.qh), std::end(block.qh), 0xFF);
      std::fill(std::begin(block.scales), std::end(block.scales), 0xFF);
    } else {
      std::fill(std::begin(block.ql), std::end(block.ql), 0xFF);
      std::fill(std::begin(block.qh), std::end(block.qh), 0xFF);
      std::fill(std::begin(block.scales), std::end(block.scales), static_cast<std::int8_t>(-128));
    }
  }
  for (int fill : {-128, 127}) {
    auto x = random_q8k(4, 9, fill, fill);
    const test::ExactDot expected = exact_dot(w, x);
    for (DotIsa isa : supported_isas()) {
      EXPECT_NEAR(TypeParam::kernel(isa)(w.data(), x.data(), w.size()), expected.value,
                  kRelativeTolerance * expected.magnitude)
          << name(isa) << " fill=" << fill;
    }
  }
}

TYPED_TEST(DotTest, EveryVariantAgreesWithScalar) {
  const auto w = TypeParam::random(16, 42);
  const auto x = random_q8k(16, 43);
  const test::ExactDot expected = exact_dot(w, x);
  const float scalar = TypeParam::kernel(DotIsa::Scalar)(w.data(), x.data(), w.size());
  for (DotIsa isa : supported_isas()) {
    EXPECT_NEAR(TypeParam::kernel(isa)(w.data(), x.data(), w.size()), scalar,
                kRelativeTolerance * expected.magnitude)
        << name(isa);
  }
}

TYPED_TEST(DotTest, RowsKernelGivesTheSingleRowKernelsBits) {
  // Odd and even row counts around the lockstep width, every tail of the groups of four blocks;
  // the sentinel after the last output catches a write past the end.
  for (std::size_t blocks = 1; blocks <= 9; ++blocks) {
    for (std::size_t rows : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 13u, 18u}) {
      const auto w = TypeParam::random(rows * blocks, rows * 100 + blocks);
      const auto x = random_q8k(blocks, blocks + 17);
      for (DotIsa isa : supported_isas()) {
        std::vector<float> out(rows + 1, kSentinel);
        TypeParam::rows_kernel(isa)(w.data(), rows, x.data(), blocks, out.data());
        for (std::size_t r = 0; r < rows; ++r) {
          const float single = TypeParam::kernel(isa)(w.data() + r * blocks, x.data(), blocks);
          EXPECT_EQ(std::bit_cast<std::uint32_t>(out[r]), std::bit_cast<std::uint32_t>(single))
              << name(isa) << " rows=" << rows << " blocks=" << blocks << " row " << r << ": " << out[r]
              << " vs " << single;
        }
        EXPECT_EQ(out[rows], kSentinel) << name(isa) << " rows=" << rows << " blocks=" << blocks;
      }
    }
  }
}

TYPED_TEST(DotTest, FourRunsKernelGivesTheSingleRowKernelsBitsForRunsAnywhere) {
  // Four runs from four separate allocations, in an order unrelated to their addresses, for runs of
  // zero to three rows and every tail of the groups of four blocks; each output goes where its
  // pointer says and nothing past a run's outputs is written.
  for (std::size_t blocks = 1; blocks <= 9; ++blocks) {
    for (std::size_t count = 0; count <= 3; ++count) {
      std::vector<std::vector<typename TypeParam::Block>> runs;
      for (std::uint64_t r = 0; r < 4; ++r) {
        runs.push_back(TypeParam::random(std::max<std::size_t>(count, 1) * blocks, 1000 * blocks + 10 * count + r));
      }
      const typename TypeParam::Block* const starts[4] = {runs[2].data(), runs[0].data(), runs[3].data(),
                                                          runs[1].data()};
      const auto x = random_q8k(blocks, blocks + 29);
      for (DotIsa isa : supported_isas()) {
        std::vector<float> out(4 * (count + 1), kSentinel);  // room for a run's outputs and a sentinel
        const std::size_t order[4] = {3, 1, 0, 2};               // where each run's outputs go
        float* const outs[4] = {&out[order[0] * (count + 1)], &out[order[1] * (count + 1)],
                                &out[order[2] * (count + 1)], &out[order[3] * (count + 1)]};
        TypeParam::four_runs_kernel(isa)(starts, count, x.data(), blocks, outs);
        for (std::size_t r = 0; r < 4; ++r) {
          for (std::size_t i = 0; i < count; ++i) {
            const float single = TypeParam::kernel(isa)(starts[r] + i * blocks, x.data(), blocks);
            EXPECT_EQ(std::bit_cast<std::uint32_t>(outs[r][i]), std::bit_cast<std::uint32_t>(single))
                << name(isa) << " blocks=" << blocks << " count=" << count << " run " << r << " row " << i << ": "
                << outs[r][i] << " vs " << single;
          }
          EXPECT_EQ(outs[r][count], kSentinel) << name(isa) << " blocks=" << blocks << " count=" << count;
        }
      }
    }
  }
}

TYPED_TEST(DotTest, PublicDotValidatesSizesAndHonoursTheBackend) {
  const auto w = TypeParam::random(3, 5);
  const auto x = random_q8k(4, 6);
  EXPECT_THROW(TypeParam::dot(w, x, Backend::Scalar), InvalidArgument);
  EXPECT_THROW(TypeParam::dot(w, std::span(x).first(2), Backend::Auto), InvalidArgument);
  EXPECT_EQ(TypeParam::dot({}, {}, Backend::Auto), 0.0f);
  const auto x3 = std::span(x).first(3);
  for (Backend backend : kConcreteBackends) {
    if (!brick::is_supported(backend)) continue;
    EXPECT_EQ(TypeParam::dot(w, x3, backend), TypeParam::kernel(dot_isa(backend))(w.data(), x3.data(), 3))
        << name(backend);
  }
}

TEST(DotDispatch, Avx512RunsTheBestVariantTheCpuHas) {
  EXPECT_EQ(dot_isa(Backend::Scalar), DotIsa::Scalar);
  if (brick::is_supported(Backend::Avx2)) {
    EXPECT_EQ(dot_isa(Backend::Avx2), DotIsa::Avx2);
  }
  if (brick::is_supported(Backend::Avx512)) {
    const DotIsa expected = !cpu_features().avx512vnni ? DotIsa::Avx512
                            : cpu_features().gfni       ? DotIsa::Avx512Gfni
                                                        : DotIsa::Avx512Vnni;
    EXPECT_EQ(dot_isa(Backend::Avx512), expected);
  }
  CpuFeatures none;
  EXPECT_TRUE(is_supported(DotIsa::Scalar, none));
  EXPECT_FALSE(is_supported(DotIsa::Avx2, none));
  EXPECT_FALSE(is_supported(DotIsa::Avx512Vnni, none));
  EXPECT_FALSE(is_supported(DotIsa::Avx512Gfni, none));
  // VNNI without GFNI (Cascade Lake) keeps the VNNI kernel.
  CpuFeatures cascade_lake;
  cascade_lake.avx = cascade_lake.avx2 = cascade_lake.fma = cascade_lake.f16c = true;
  cascade_lake.avx512f = cascade_lake.avx512bw = cascade_lake.avx512dq = cascade_lake.avx512vl = true;
  cascade_lake.avx512vnni = true;
  EXPECT_TRUE(is_supported(DotIsa::Avx512Vnni, cascade_lake));
  EXPECT_FALSE(is_supported(DotIsa::Avx512Gfni, cascade_lake));
  cascade_lake.gfni = true;
  EXPECT_TRUE(is_supported(DotIsa::Avx512Gfni, cascade_lake));
}

TYPED_TEST(DotTest, MatchesGgmlGoldenVectors) {
  const auto& golden = test::ggml_golden();
  int checked = 0;
  for (const auto& line : golden) {
    const std::string& key = line.first;
    const std::string suffix = ".quant_hex";
    if (key.size() < suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string row = key.substr(0, key.size() - suffix.size());
    if (row.find(TypeParam::kGgmlName) == std::string::npos) continue;
    const auto w = test::golden_blocks<typename TypeParam::Block>(key);
    const auto x = test::golden_blocks<BlockQ8K>(row + ".q8K_hex");
    ASSERT_EQ(w.size(), x.size()) << row;
    const double ggml = std::stod(test::golden_field(row + ".vec_dot_cpu").at(0));
    const test::ExactDot expected = exact_dot(w, x);
    for (DotIsa isa : supported_isas()) {
      EXPECT_NEAR(TypeParam::kernel(isa)(w.data(), x.data(), w.size()), ggml,
                  kRelativeTolerance * expected.magnitude + 1e-6)
          << name(isa) << " " << row;
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

}  // namespace
}  // namespace brick::quant
