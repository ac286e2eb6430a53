// The generic dot tester: every kernel of the kernel table (quant/dot_kernel_table.hpp), one test
// instance each, against an independent exact evaluation and against its format's scalar kernel, on
// random rows (every byte pattern), integer rows, extreme and adversarial values; its rows and
// four-runs shapes against its row kernel bit for bit; and the dispatch that picks kernels.
// Instances for instruction sets this CPU lacks are skipped, saying which feature is missing.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/matvec.hpp"
#include "quant/dot_formats_testing.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/row_walk.hpp"
#include "support/ggml_golden.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::detail::DotFormats;
using quant::detail::find_kernel;
using quant::detail::Isa;
using quant::detail::with_format;

// Written where no kernel output may go: a kernel that writes past its rows changes it.
constexpr float kSentinel = -12345.0f;

struct KernelCase {
  quant::TensorType type;
  quant::WeightLayout layout;
  Isa isa;
  std::string_view name;
  std::string_view gemm_name;
  friend void PrintTo(const KernelCase& c, std::ostream* os) { *os << c.name; }
};

std::vector<KernelCase> table_kernels() {
  std::vector<KernelCase> cases;
  std::apply(
      [&](auto... formats) {
        const auto add = [&](auto format) {
          for (const auto& kernel : quant::detail::kDotKernels<decltype(format)>) {
            cases.push_back({decltype(format)::kType, decltype(format)::kLayout, kernel.isa, kernel.name, kernel.gemm_name});
          }
        };
        (add(formats), ...);
      },
      DotFormats{});
  return cases;
}

// Within tolerance of the exact value, relative to the terms' magnitude, plus what each of the
// `values` products may lose below the smallest float subnormal; where the terms leave the float
// range, any non-finite result is right too.
::testing::AssertionResult close_to_exact(float ours, const ExactDot& exact, double tolerance, std::size_t values) {
  const double limit = std::numeric_limits<float>::max();
  const bool in_range = std::isfinite(exact.magnitude) && exact.magnitude <= limit;
  if (!in_range && !std::isfinite(ours)) return ::testing::AssertionSuccess();
  const double allowed = tolerance * exact.magnitude + exact.flushable + static_cast<double>(values) * 0x1p-149;
  if (std::abs(static_cast<double>(ours) - exact.value) <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << ours << " vs exact " << exact.value << ": more than " << allowed
                                       << " apart (terms' magnitude " << exact.magnitude << ")";
}

class DotKernelTest : public ::testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    if (const auto missing = quant::detail::missing_feature(GetParam().isa)) {
      GTEST_SKIP() << GetParam().name << " needs " << *missing << ", which this CPU lacks";
    }
  }

  // check(Format{}, kernel, testing) for this instance's kernel.
  template <class Check>
  void run(Check&& check) const {
    ASSERT_TRUE(with_format(GetParam().type, GetParam().layout, [&](auto format) {
      using Format = decltype(format);
      check(format, *find_kernel<Format>(GetParam().isa), FormatTesting<Format>{});
    }));
  }
};

TEST_P(DotKernelTest, MatchesTheExactValueOnRandomRows) {
  run([](auto format, const auto& kernel, auto testing) {
    using Format = decltype(format);
    for (const std::size_t length : testing.lengths()) {
      for (std::uint64_t seed = 1; seed <= 12; ++seed) {
        const auto w = testing.random_weights(length, seed);
        const auto x = testing.random_activations(length, seed * 7919);
        EXPECT_TRUE(close_to_exact(kernel.row(w.data(), x.data(), length), testing.exact(w, x),
                                   testing.tolerance(length), length * Format::kValues))
            << kernel.name << " length " << length << " seed " << seed;
      }
    }
  });
}

TEST_P(DotKernelTest, IntegerDotsAreExact) {
  run([](auto, const auto& kernel, auto testing) {
    for (const std::size_t length : testing.lengths()) {
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        const auto [w, x] = testing.integer_rows(length, seed);
        const ExactDot exact = testing.exact(w, x);
        ASSERT_LT(std::abs(exact.value), 0x1p24);
        EXPECT_EQ(kernel.row(w.data(), x.data(), length), static_cast<float>(exact.value))
            << kernel.name << " length " << length << " seed " << seed;
      }
    }
  });
}

TEST_P(DotKernelTest, ExtremeValuesDoNotSaturate) {
  run([](auto format, const auto& kernel, auto testing) {
    using Format = decltype(format);
    for (const std::size_t length : testing.lengths()) {
      if (length > 64) continue;
      const auto w = testing.extreme_weights(length);
      for (const bool negative : {false, true}) {
        const auto x = testing.extreme_activations(length, negative);
        EXPECT_TRUE(close_to_exact(kernel.row(w.data(), x.data(), length), testing.exact(w, x),
                                   testing.tolerance(length), length * Format::kValues))
            << kernel.name << " length " << length << (negative ? " negative" : " positive");
      }
      // The GEMM kernel meets the same extremes in its integer sums: rows side by side and alone,
      // tokens of each sign in turn, every (row, token) with the row kernel's bits.
      if (kernel.tokens == nullptr) continue;
      constexpr std::size_t kRows = 5, kTokens = 9;
      const auto rows = testing.extreme_weights(length * kRows);
      const auto positive = testing.extreme_activations(length, false);
      const auto negative = testing.extreme_activations(length, true);
      std::vector<typename Format::Activation> x;
      for (std::size_t t = 0; t < kTokens; ++t) {
        const auto& token = t % 2 ? negative : positive;
        x.insert(x.end(), token.begin(), token.end());
      }
      std::vector<float> out(kRows * kTokens);
      kernel.tokens(rows.data(), kRows, x.data(), kTokens, length, out.data(), kRows);
      for (std::size_t t = 0; t < kTokens; ++t) {
        for (std::size_t r = 0; r < kRows; ++r) {
          EXPECT_EQ(std::bit_cast<std::uint32_t>(out[t * kRows + r]),
                    std::bit_cast<std::uint32_t>(kernel.row(rows.data() + r * length, x.data() + t * length, length)))
              << kernel.name << " length " << length << " row " << r << " token " << t;
        }
      }
    }
  });
}

TEST_P(DotKernelTest, AdversarialRowsConvertedAsTheLibraryDoes) {
  run([](auto format, const auto& kernel, auto testing) {
    using Format = decltype(format);
    const std::size_t n = 1024;
    const auto w_patterns = adversarial_patterns(n, 5);
    const auto x_patterns = adversarial_patterns(n, 6);
    for (std::size_t i = 0; i < w_patterns.size(); ++i) {
      for (const std::size_t j : {i, (i + 3) % x_patterns.size()}) {
        const auto w = testing.weights_from(w_patterns[i].values);
        const auto x = testing.activations_from(x_patterns[j].values);
        EXPECT_TRUE(close_to_exact(kernel.row(w.data(), x.data(), n / Format::kValues), testing.exact(w, x),
                                   testing.tolerance(n / Format::kValues), n))
            << kernel.name << " " << w_patterns[i].name << " . " << x_patterns[j].name;
      }
    }
  });
}

TEST_P(DotKernelTest, AgreesWithTheScalarKernel) {
  run([](auto format, const auto& kernel, auto testing) {
    using Format = decltype(format);
    const auto& scalar = *find_kernel<Format>(Isa::Scalar);
    for (const std::size_t length : testing.lengths()) {
      const auto w = testing.random_weights(length, 42 + length);
      const auto x = testing.random_activations(length, 43 + length);
      const ExactDot exact = testing.exact(w, x);
      EXPECT_NEAR(kernel.row(w.data(), x.data(), length), scalar.row(w.data(), x.data(), length),
                  2 * testing.tolerance(length) * exact.magnitude)
          << kernel.name << " length " << length;
    }
  });
}

TEST_P(DotKernelTest, RowsKernelGivesTheRowKernelsBitsInBothWalks) {
  // Odd and even row counts around the lockstep width, in each row walk (quant/row_walk.hpp); the
  // sentinel after the last output catches a write past the end.
  run([](auto, const auto& kernel, auto testing) {
    for (const auto walk : {quant::detail::RowWalk::FourRuns, quant::detail::RowWalk::OneAfterAnother}) {
      const quant::detail::RowWalkPin pin(walk);
      for (const std::size_t length : testing.lengths()) {
        for (const std::size_t rows : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u, 13u, 18u}) {
          const auto w = testing.random_weights(rows * length, rows * 100 + length);
          const auto x = testing.random_activations(length, length + 17);
          std::vector<float> out(rows + 1, kSentinel);
          kernel.rows(w.data(), rows, x.data(), length, out.data());
          for (std::size_t r = 0; r < rows; ++r) {
            const float single = kernel.row(w.data() + r * length, x.data(), length);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(out[r]), std::bit_cast<std::uint32_t>(single))
                << kernel.name << " walk " << static_cast<int>(walk) << " rows " << rows << " length " << length
                << " row " << r << ": " << out[r] << " vs " << single;
          }
          ASSERT_EQ(out[rows], kSentinel) << kernel.name << " rows " << rows << " length " << length;
        }
      }
    }
  });
}

TEST_P(DotKernelTest, FourRunsKernelGivesTheRowKernelsBitsForRunsAnywhere) {
  // Four runs from four separate allocations, in an order unrelated to their addresses, for runs of
  // zero to three rows; each output goes where its pointer says and nothing past a run's outputs is
  // written.
  run([](auto format, const auto& kernel, auto testing) {
    using Weight = typename decltype(format)::Weight;
    for (const std::size_t length : testing.lengths()) {
      for (std::size_t count = 0; count <= 3; ++count) {
        std::vector<std::vector<Weight>> runs;
        for (std::uint64_t r = 0; r < 4; ++r) {
          runs.push_back(testing.random_weights(std::max<std::size_t>(count, 1) * length, 1000 * length + 10 * count + r));
        }
        const Weight* const starts[4] = {runs[2].data(), runs[0].data(), runs[3].data(), runs[1].data()};
        const auto x = testing.random_activations(length, length + 29);
        std::vector<float> out(4 * (count + 1), kSentinel);  // room for a run's outputs and a sentinel
        const std::size_t order[4] = {3, 1, 0, 2};            // where each run's outputs go
        float* const outs[4] = {&out[order[0] * (count + 1)], &out[order[1] * (count + 1)],
                                &out[order[2] * (count + 1)], &out[order[3] * (count + 1)]};
        kernel.four_runs(starts, count, x.data(), length, outs);
        for (std::size_t r = 0; r < 4; ++r) {
          for (std::size_t i = 0; i < count; ++i) {
            const float single = kernel.row(starts[r] + i * length, x.data(), length);
            ASSERT_EQ(std::bit_cast<std::uint32_t>(outs[r][i]), std::bit_cast<std::uint32_t>(single))
                << kernel.name << " length " << length << " count " << count << " run " << r << " row " << i;
          }
          ASSERT_EQ(outs[r][count], kSentinel) << kernel.name << " length " << length << " count " << count;
        }
      }
    }
  });
}

TEST_P(DotKernelTest, GemmGivesTheRowKernelsBitsForEveryRowAndToken) {
  // Token counts around the micro-kernel's tile of eight, rows on both sides of four and of eight
  // (13 = a pass of eight, one of four and a single row; and a chunk of eight then one of five
  // where a chunk of unpacked rows holds eight), an output stride wider than the rows (the fused
  // ops' layout); every slot the GEMM must not write keeps its sentinel.
  run([](auto, const auto& kernel, auto testing) {
    for (const std::size_t length : testing.lengths()) {
      for (const std::size_t rows : {1u, 3u, 5u, 13u}) {
        for (const std::size_t tokens : {1u, 2u, 7u, 8u, 9u, 17u}) {
          const auto w = testing.random_weights(rows * length, rows * 1000 + length + tokens);
          const auto x = testing.random_activations(tokens * length, 10 * length + tokens);
          const std::size_t stride = rows + 2;
          std::vector<float> out(tokens * stride, kSentinel);
          kernel.tokens(w.data(), rows, x.data(), tokens, length, out.data(), stride);
          for (std::size_t t = 0; t < tokens; ++t) {
            for (std::size_t r = 0; r < stride; ++r) {
              const float got = out[t * stride + r];
              if (r >= rows) {
                ASSERT_EQ(got, kSentinel) << kernel.gemm_name << " wrote past row " << rows;
                continue;
              }
              const float single = kernel.row(w.data() + r * length, x.data() + t * length, length);
              ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(single))
                  << kernel.gemm_name << " length " << length << " rows " << rows << " tokens " << tokens << " row "
                  << r << " token " << t << ": " << got << " vs " << single;
            }
          }
        }
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Table, DotKernelTest, ::testing::ValuesIn(table_kernels()),
                         [](const ::testing::TestParamInfo<KernelCase>& info) { return std::string(info.param.name); });

TEST(DotKernelTable, EveryComputableTypeHasAKernelOfEveryBackend) {
  for (std::uint32_t id = 0; id < 64; ++id) {
    const auto traits = quant::tensor_type_traits(id);
    if (!traits) continue;
    const bool has_format = with_format(traits->type, [](auto format) {
      using Format = decltype(format);
      EXPECT_NE(find_kernel<Format>(Isa::Scalar), nullptr);
      EXPECT_NE(find_kernel<Format>(Isa::Avx2), nullptr);
      EXPECT_NE(find_kernel<Format>(Isa::Avx512), nullptr);
    });
    EXPECT_EQ(has_format, quant::is_computable(traits->type)) << traits->name;
  }
}

TEST(DotKernelTable, KernelNamesSayFormatAndInstructionSet) {
  for (const KernelCase& c : table_kernels()) {
    EXPECT_TRUE(c.name.starts_with("dot_")) << c.name;
    EXPECT_TRUE(c.name.ends_with(quant::detail::name(c.isa))) << c.name;
    EXPECT_EQ(c.name[c.name.size() - quant::detail::name(c.isa).size() - 1], '_') << c.name;
    EXPECT_EQ(c.gemm_name, "gemm_" + std::string(c.name.substr(4))) << c.name;
  }
}

TEST(DotKernelTable, EachBackendRunsTheBestVariantTheCpuHas) {
  using quant::detail::Q5KFormat;
  using quant::detail::select_kernel;
  EXPECT_EQ(select_kernel<Q5KFormat>(Backend::Scalar).isa, Isa::Scalar);
  if (is_supported(Backend::Avx2)) {
    EXPECT_EQ(select_kernel<Q5KFormat>(Backend::Avx2).isa, cpu_features().avxvnni ? Isa::AvxVnni : Isa::Avx2);
  }
  if (is_supported(Backend::Avx512)) {
    const Isa expected = !cpu_features().avx512vnni ? Isa::Avx512
                         : cpu_features().gfni     ? Isa::Avx512Gfni
                                                   : Isa::Avx512Vnni;
    EXPECT_EQ(select_kernel<Q5KFormat>(Backend::Avx512).isa, expected);
  }
  if (is_supported(Backend::Avx2)) {
    EXPECT_EQ(select_kernel<quant::detail::Q80Format>(Backend::Avx2).isa,
              cpu_features().avxvnni ? Isa::AvxVnni : Isa::Avx2);
  }
  EXPECT_EQ(quant::dot_kernel_name(quant::TensorType::Q5_K, Backend::Scalar), "dot_q5k_q8k_scalar");
  EXPECT_EQ(quant::dot_kernel_name(quant::TensorType::Q6_K, Backend::Auto),
            select_kernel<quant::detail::Q6KFormat>(Backend::Auto).name);
  EXPECT_THROW(quant::dot_kernel_name(quant::TensorType::Q4_0, Backend::Scalar), InvalidArgument);
}

// The rows kernels walk as the CPU's vendor prefers (quant/row_walk.hpp) unless a pin says
// otherwise; the table instances above pin both walks, and the walks themselves are checked here
// over the scalar Q4_K row kernel.
TEST(RowWalk, FollowsTheCpuVendorUnlessPinned) {
  using quant::detail::RowWalk;
  using quant::detail::RowWalkPin;
  EXPECT_EQ(quant::detail::row_walk_for("GenuineIntel"), RowWalk::FourRuns);
  EXPECT_EQ(quant::detail::row_walk_for("AuthenticAMD"), RowWalk::OneAfterAnother);
  EXPECT_EQ(quant::detail::row_walk_for(""), RowWalk::OneAfterAnother);
  const RowWalk cpu = quant::detail::row_walk_for(cpu_features().vendor);
  EXPECT_EQ(quant::detail::row_walk(), cpu);
  {
    const RowWalkPin pin(RowWalk::FourRuns);
    EXPECT_EQ(quant::detail::row_walk(), RowWalk::FourRuns);
    {
      const RowWalkPin inner(RowWalk::OneAfterAnother);
      EXPECT_EQ(quant::detail::row_walk(), RowWalk::OneAfterAnother);
    }
    EXPECT_EQ(quant::detail::row_walk(), RowWalk::FourRuns);
  }
  EXPECT_EQ(quant::detail::row_walk(), cpu);
}

TEST(RowWalk, TheCpusWalkFromTheSizeOnTheFamilysWalkBelowItUnlessPinned) {
  using quant::detail::kFourRunsMinBytes;
  using quant::detail::RowWalk;
  using quant::detail::walks_in_four_runs;
  const bool cpu_four_runs = quant::detail::row_walk() == RowWalk::FourRuns;
  EXPECT_FALSE(walks_in_four_runs(kFourRunsMinBytes - 1, RowWalk::OneAfterAnother));
  EXPECT_TRUE(walks_in_four_runs(kFourRunsMinBytes - 1, RowWalk::FourRuns));
  EXPECT_EQ(walks_in_four_runs(kFourRunsMinBytes, RowWalk::OneAfterAnother), cpu_four_runs);
  EXPECT_EQ(walks_in_four_runs(kFourRunsMinBytes, RowWalk::FourRuns), cpu_four_runs);
  {
    const quant::detail::RowWalkPin pin(RowWalk::FourRuns);
    EXPECT_TRUE(walks_in_four_runs(1, RowWalk::OneAfterAnother));
  }
  const quant::detail::RowWalkPin pin(RowWalk::OneAfterAnother);
  EXPECT_FALSE(walks_in_four_runs(1, RowWalk::FourRuns));
  EXPECT_FALSE(walks_in_four_runs(100 * kFourRunsMinBytes, RowWalk::FourRuns));
}

// A four-runs kernel for rows_by_walk() below: the scalar row kernel on each run's rows.
void scalar_q4k_four_runs(const quant::BlockQ4K* const (&starts)[4], std::size_t count, const quant::BlockQ8K* x,
                          std::size_t blocks, float* const (&out)[4]) noexcept {
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t i = 0; i < count; ++i)
      out[r][i] = quant::kernels::dot_q4k_q8k_scalar(starts[r] + i * blocks, x, blocks);
  }
}

TEST(RowWalk, BothWalksGiveTheRowKernelsBits) {
  // Four runs of the rows and the rows past them (rows_by_walk), or one row after another: every
  // row's result lands in its place, and nothing past the last.
  using Format = quant::detail::Q4KFormat;
  constexpr auto kRow = &quant::kernels::dot_q4k_q8k_scalar;
  const FormatTesting<Format> testing;
  const std::size_t length = 2;
  const auto x = testing.random_activations(length, 5);
  for (const std::size_t rows : {1u, 3u, 4u, 5u, 8u, 9u, 13u, 18u}) {
    const auto w = testing.random_weights(rows * length, rows);
    for (const quant::detail::RowWalk walk :
         {quant::detail::RowWalk::FourRuns, quant::detail::RowWalk::OneAfterAnother}) {
      const quant::detail::RowWalkPin pin(walk);
      std::vector<float> out(rows + 1, kSentinel);
      quant::detail::rows_by_walk<Format, kRow, &scalar_q4k_four_runs>(w.data(), rows, x.data(), length, out.data());
      for (std::size_t r = 0; r < rows; ++r) {
        const float single = kRow(w.data() + r * length, x.data(), length);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out[r]), std::bit_cast<std::uint32_t>(single)) << rows << " " << r;
      }
      EXPECT_EQ(out[rows], kSentinel);
    }
  }
}

TEST(DotKernelTable, InstructionSetsNeedTheirFeatures) {
  using quant::detail::is_supported;
  const CpuFeatures none;
  EXPECT_TRUE(is_supported(Isa::Scalar, none));
  EXPECT_FALSE(is_supported(Isa::Avx2, none));
  EXPECT_FALSE(is_supported(Isa::Avx512Vnni, none));
  EXPECT_FALSE(is_supported(Isa::Avx512Gfni, none));
  EXPECT_FALSE(is_supported(Isa::Avx512Bf16, none));
  // VNNI without GFNI or BF16 (Cascade Lake) keeps the VNNI kernels.
  CpuFeatures cascade_lake;
  cascade_lake.avx = cascade_lake.avx2 = cascade_lake.fma = cascade_lake.f16c = true;
  cascade_lake.avx512f = cascade_lake.avx512bw = cascade_lake.avx512dq = cascade_lake.avx512vl = true;
  cascade_lake.avx512vnni = true;
  EXPECT_TRUE(is_supported(Isa::Avx512Vnni, cascade_lake));
  EXPECT_FALSE(is_supported(Isa::Avx512Gfni, cascade_lake));
  EXPECT_EQ(quant::detail::missing_feature(Isa::Avx512Gfni, cascade_lake), "GFNI");
  EXPECT_EQ(quant::detail::missing_feature(Isa::Avx512Bf16, cascade_lake), "AVX-512 BF16");
  cascade_lake.gfni = cascade_lake.avx512bf16 = true;
  EXPECT_TRUE(is_supported(Isa::Avx512Gfni, cascade_lake));
  EXPECT_TRUE(is_supported(Isa::Avx512Bf16, cascade_lake));
  EXPECT_EQ(quant::detail::missing_feature(Isa::AvxVnni, cascade_lake), "AVX-VNNI");
  // AVX-VNNI without AVX-512 (Alder Lake): the VEX VNNI kernels are AVX2's.
  CpuFeatures alder_lake;
  alder_lake.avx = alder_lake.avx2 = alder_lake.fma = alder_lake.f16c = alder_lake.avxvnni = true;
  EXPECT_TRUE(is_supported(Isa::AvxVnni, alder_lake));
  EXPECT_FALSE(is_supported(Isa::Avx512, alder_lake));
  EXPECT_EQ(quant::detail::backend_of(Isa::AvxVnni), Backend::Avx2);
}

// The AVX-VNNI Q8_0 kernels are the AVX-512 VNNI ones in half-width vectors: the same exact block
// sums added in the same tree, so the same bits, -128 in x or in w or not.
TEST(DotKernelTable, AvxVnniQ80KernelsGiveTheAvx512VnniBits) {
  using quant::detail::Q80Format;
  for (const Isa isa : {Isa::AvxVnni, Isa::Avx512Vnni}) {
    if (const auto missing = quant::detail::missing_feature(isa)) {
      GTEST_SKIP() << "comparing dot_q8_0_q8_0_avxvnni with dot_q8_0_q8_0_avx512vnni needs "
                   << *missing << ", which this CPU lacks";
    }
  }
  const auto& avx512 = *find_kernel<Q80Format>(Isa::Avx512Vnni);
  const auto& vnni = *find_kernel<Q80Format>(Isa::AvxVnni);
  using Testing = FormatTesting<Q80Format>;
  constexpr std::size_t kRows = 9, kTokens = 21;
  // Part of a half group, a half and a part, one group, two groups and a part.
  for (const std::size_t kBlocks : {5, 12, 16, 37}) {
    for (const int lo : {-128, -127}) {
      const auto w = Testing::random_blocks(kBlocks * kRows, 5, -128, 127);
      const auto x = Testing::random_blocks(kBlocks * kTokens, 6, lo, 127);
      std::vector<float> ours(kRows * kTokens), theirs(kRows * kTokens);
      vnni.tokens(w.data(), kRows, x.data(), kTokens, kBlocks, ours.data(), kRows);
      avx512.tokens(w.data(), kRows, x.data(), kTokens, kBlocks, theirs.data(), kRows);
      for (std::size_t i = 0; i < ours.size(); ++i) {
        EXPECT_EQ(std::bit_cast<std::uint32_t>(ours[i]), std::bit_cast<std::uint32_t>(theirs[i]))
            << kBlocks << " " << lo << " " << i;
      }
      for (std::size_t t = 0; t < kTokens; ++t) {
        const quant::BlockQ80* xt = x.data() + t * kBlocks;
        vnni.rows(w.data(), kRows, xt, kBlocks, ours.data());
        avx512.rows(w.data(), kRows, xt, kBlocks, theirs.data());
        for (std::size_t r = 0; r < kRows; ++r) {
          EXPECT_EQ(std::bit_cast<std::uint32_t>(ours[r]), std::bit_cast<std::uint32_t>(theirs[r]))
              << kBlocks << " " << lo << " " << r;
          EXPECT_EQ(std::bit_cast<std::uint32_t>(vnni.row(w.data() + r * kBlocks, xt, kBlocks)),
                    std::bit_cast<std::uint32_t>(avx512.row(w.data() + r * kBlocks, xt, kBlocks)));
        }
      }
    }
  }
}

// The public dot functions check sizes and run the kernel the backend selects.
template <class Format>
void expect_public_dot_runs_the_selected_kernel(
    float (*dot)(std::span<const typename Format::Weight>,
                 std::span<const typename Format::Activation>, Backend)) {
  using Testing = FormatTesting<Format>;
  const auto w = Testing::random_weights(3, 5);
  const auto x = Testing::random_activations(4, 6);
  EXPECT_THROW(dot(w, x, Backend::Scalar), InvalidArgument);
  EXPECT_EQ(dot({}, {}, Backend::Auto), 0.0f);
  const auto x3 = std::span(x).first(3);
  for (const Backend backend : kConcreteBackends) {
    if (!is_supported(backend)) continue;
    EXPECT_EQ(dot(w, x3, backend), quant::detail::select_kernel<Format>(backend).row(w.data(), x3.data(), 3))
        << name(backend);
  }
}

TEST(PublicDot, ValidatesSizesAndRunsTheSelectedKernel) {
  expect_public_dot_runs_the_selected_kernel<quant::detail::F16Format>(quant::dot_f16_f16);
  expect_public_dot_runs_the_selected_kernel<quant::detail::BF16Format>(quant::dot_bf16_bf16);
  expect_public_dot_runs_the_selected_kernel<quant::detail::Q80Format>(quant::dot_q8_0_q8_0);
  expect_public_dot_runs_the_selected_kernel<quant::detail::Q4KFormat>(quant::dot_q4k_q8k);
  expect_public_dot_runs_the_selected_kernel<quant::detail::Q5KFormat>(quant::dot_q5k_q8k);
  expect_public_dot_runs_the_selected_kernel<quant::detail::Q6KFormat>(quant::dot_q6k_q8k);
}

// A Q8_K row whose bsums are not its sums would give each backend another answer (the SIMD kernels
// take them as given, the scalar one sums the quants): every backend refuses it, naming the block.
template <class Format>
void expect_inconsistent_bsums_refused(float (*dot)(std::span<const typename Format::Weight>,
                                                   std::span<const quant::BlockQ8K>, Backend)) {
  using Testing = FormatTesting<Format>;
  const auto w = Testing::random_weights(3, 7);
  auto x = Testing::random_activations(3, 8);
  x[2].bsums[5] = static_cast<std::int16_t>(x[2].bsums[5] + 1000);
  for (const Backend backend : kConcreteBackends) {
    if (!is_supported(backend)) continue;
    try {
      dot(w, x, backend);
      ADD_FAILURE() << name(backend) << " took bsums that are not the sums of the quants";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("block 2 has bsums[5]"), std::string::npos) << e.what();
    }
  }
}

TEST(PublicDot, RefusesQ8KRowsWhoseBsumsAreNotTheirSums) {
  expect_inconsistent_bsums_refused<quant::detail::Q4KFormat>(quant::dot_q4k_q8k);
  expect_inconsistent_bsums_refused<quant::detail::Q5KFormat>(quant::dot_q5k_q8k);
  expect_inconsistent_bsums_refused<quant::detail::Q6KFormat>(quant::dot_q6k_q8k);
}

// ggml's own dot products of its golden rows (tests/quant/data/), within summation-order distance.
template <class Format>
void expect_golden_dots(const std::string& ggml_name) {
  int checked = 0;
  for (const auto& line : ggml_golden()) {
    const std::string& key = line.first;
    const std::string suffix = ".quant_hex";
    if (!key.ends_with(suffix) || key.find(ggml_name) == std::string::npos) continue;
    const std::string row = key.substr(0, key.size() - suffix.size());
    const auto w = golden_blocks<typename Format::Weight>(key);
    const auto x = golden_blocks<quant::BlockQ8K>(row + ".q8K_hex");
    ASSERT_EQ(w.size(), x.size()) << row;
    const double ggml = std::stod(golden_field(row + ".vec_dot_cpu").at(0));
    const ExactDot exact = exact_dot(w, x);
    for (const auto& kernel : quant::detail::kDotKernels<Format>) {
      if (!quant::detail::is_supported(kernel.isa)) continue;
      EXPECT_NEAR(kernel.row(w.data(), x.data(), w.size()), ggml, 1e-6 * exact.magnitude + 1e-6) << kernel.name << " " << row;
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

TEST(DotGolden, MatchesGgmlsDotsOfItsGoldenRows) {
  expect_golden_dots<quant::detail::Q5KFormat>("q5_K");
  expect_golden_dots<quant::detail::Q6KFormat>("q6_K");
}

}  // namespace
}  // namespace brick::test
