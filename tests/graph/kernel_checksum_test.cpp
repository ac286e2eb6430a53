#include "brick/graph/kernel_checksum.hpp"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cmath>
#include <algorithm>
#include <bit>
#include <limits>
#include <string>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/core/error.hpp"
#include "graph/kernels/checksum_kernels.hpp"

namespace brick::graph {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) { return std::as_bytes(std::span(text.data(), text.size())); }

TEST(Xxh3, MatchesTheCheckValueAndTheLibrarysStreamingForm) {
  EXPECT_EQ(xxh3_64({}), 0x2D06800538D394C2ull);
  EXPECT_EQ(xxh3_64(bytes_of("")), 0x2D06800538D394C2ull);
  // Every length class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, longer) against the library's
  // seeded and streaming entry points, fed in uneven pieces.
  std::vector<std::byte> data(5000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 31 + 7);
  for (const std::size_t n : {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 4999}) {
    const std::span<const std::byte> bytes(data.data(), n);
    EXPECT_EQ(xxh3_64(bytes), XXH3_64bits_withSeed(bytes.data(), n, 0)) << n;
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    for (std::size_t done = 0; done < n; done += std::min<std::size_t>(n - done, 97)) {
      XXH3_64bits_update(state, bytes.data() + done, std::min<std::size_t>(n - done, 97));
    }
    EXPECT_EQ(xxh3_64(bytes), XXH3_64bits_digest(state)) << n;
    XXH3_freeState(state);
  }
}

// Every ISA's loops against the library's baseline XXH3 and the scalar summary lanes, bit for bit,
// on every length class and on the values a summary must get right.
TEST(ChecksumKernels, EveryIsaGivesTheReferenceBits) {
  std::vector<std::byte> data(5000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 131 + 17);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values = {0.0f, -0.0f, 1e-45f, -1e-45f, 3e38f, -3e38f, inf, -inf, std::nanf(""), 1.5f};
  for (int i = 0; i < 1000; ++i) values.push_back(std::sin(static_cast<float>(i)) * static_cast<float>(1 << (i % 20)));
  values.insert(values.begin() + 500, {-0.0f, 0.0f, -0.0f});
  const std::size_t blocks = values.size() / kernels::kSummaryLanes;
  kernels::SummaryLanes reference;
  kernels::summary_lanes_scalar(values.data(), blocks, reference);
  if (!is_supported(Backend::Avx2)) GTEST_SKIP() << "no AVX2 here: the scalar loops are the only ones";
  {
    for (std::size_t n = 0; n < data.size(); n += n < 300 ? 1 : 97) {
      ASSERT_EQ(kernels::xxh3_64_avx2(data.data(), n), XXH3_64bits(data.data(), n)) << n;
    }
    kernels::SummaryLanes lanes;
    kernels::summary_lanes_avx2(values.data(), blocks, lanes);
    for (std::size_t lane = 0; lane < kernels::kSummaryLanes; ++lane) {
      EXPECT_EQ(std::bit_cast<std::uint64_t>(lanes.sum[lane]), std::bit_cast<std::uint64_t>(reference.sum[lane]));
      EXPECT_EQ(std::bit_cast<std::uint64_t>(lanes.squares[lane]), std::bit_cast<std::uint64_t>(reference.squares[lane]));
      EXPECT_EQ(std::bit_cast<std::uint32_t>(lanes.low[lane]), std::bit_cast<std::uint32_t>(reference.low[lane]));
      EXPECT_EQ(std::bit_cast<std::uint32_t>(lanes.high[lane]), std::bit_cast<std::uint32_t>(reference.high[lane]));
      EXPECT_EQ(lanes.not_finite[lane], reference.not_finite[lane]);
    }
  }
}

TEST(Xxh3, HashesEveryByteOfAnOutput) {
  std::vector<float> values(4096, 1.0f);
  const std::uint64_t before = xxh3_64(std::as_bytes(std::span(values)));
  for (const std::size_t i : {std::size_t{0}, std::size_t{1234}, values.size() - 1}) {
    std::vector<float> changed = values;
    changed[i] = std::nextafter(1.0f, 2.0f);  // one bit
    EXPECT_NE(xxh3_64(std::as_bytes(std::span(changed))), before) << i;
  }
}

TEST(NumericSummary, CountsSumsAndBoundsTheFiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = {1.0f, -2.0f, 3.5f, nan, inf, -inf, 0.5f};
  const NumericSummary s = summarize(values);
  EXPECT_EQ(s.count, 7u);
  EXPECT_DOUBLE_EQ(s.sum, 3.0);
  EXPECT_DOUBLE_EQ(s.sum_squares, 1.0 + 4.0 + 12.25 + 0.25);
  EXPECT_DOUBLE_EQ(s.min, -2.0);
  EXPECT_DOUBLE_EQ(s.max, 3.5);
  EXPECT_EQ(s.nan_count, 1u);
  EXPECT_EQ(s.inf_count, 2u);

  const NumericSummary none = summarize(std::vector<float>{nan, nan});
  EXPECT_EQ(none.nan_count, 2u);
  EXPECT_EQ(none.min, 0.0);
  EXPECT_EQ(none.max, 0.0);
  EXPECT_EQ(summarize({}), NumericSummary{});
}

TEST(NumericSummary, IsTheSameForTheSameValuesWhateverTheirLength) {
  // Lanes and the tail must cover every value exactly once: compare with a plain sum for every
  // length around the lane count.
  for (std::size_t n = 0; n < 40; ++n) {
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) - 7.25f;
    double sum = 0.0, squares = 0.0;
    for (const float v : values) {
      sum += v;
      squares += static_cast<double>(v) * v;
    }
    const NumericSummary s = summarize(values);
    EXPECT_EQ(s.count, n);
    EXPECT_NEAR(s.sum, sum, 1e-9) << n;
    EXPECT_NEAR(s.sum_squares, squares, 1e-9) << n;
    if (n > 0) {
      EXPECT_EQ(s.min, -7.25);
      EXPECT_EQ(s.max, static_cast<double>(n) - 8.25);
    }
  }
}

TEST(ChecksumLog, KeysEntriesByKernelLayerTokenAndCall) {
  ChecksumLog log;
  const std::vector<float> row = {1.0f, 2.0f};
  log.record("blk.0.ffn_down", 0, 3, row);
  log.record("blk.0.ffn_down", 0, 3, row);
  log.record("blk.0.ffn_down", 0, 4, row);
  log.record("blk.1.ffn_down", 1, 3, row);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].call, 0u);
  EXPECT_EQ(log[1].call, 1u);
  EXPECT_EQ(log[2].call, 0u);
  EXPECT_EQ(log[3].kernel, "blk.1.ffn_down");
  EXPECT_EQ(log[3].key(), (ChecksumKey{"blk.1.ffn_down", 1, 3, 0}));
  EXPECT_EQ(log[0].hash, xxh3_64(std::as_bytes(std::span(row))));
  EXPECT_EQ(log[0].summary, summarize(row));
  EXPECT_EQ(to_string(log[1].key()), "blk.0.ffn_down (layer 0, token 3, call 1)");
  EXPECT_EQ(to_string(ChecksumKey{"x", -1, -1, 0}), "x (no layer, no token)");
  EXPECT_THROW(log.record("", 0, 0, row), InvalidArgument);
}

TEST(ChecksumLog, IsBoundedAndCountsWhatItDrops) {
  ChecksumLog log(2);
  const std::vector<float> row = {1.0f};
  for (int i = 0; i < 5; ++i) log.record("k", 0, i, row);
  EXPECT_EQ(log.size(), 2u);
  EXPECT_EQ(log.dropped(), 3u);
  log.clear();
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(log.dropped(), 0u);
}

TEST(ChecksumLog, AppendTakesEntriesInCallOrderOnce) {
  ChecksumLog log;
  const KernelChecksum first = checksum({"k", 0, 1, 0}, std::vector<float>{1.0f});
  log.append(first);
  EXPECT_THROW(log.append(first), InvalidArgument);  // the same key again
  EXPECT_THROW(log.append(checksum({"k", 0, 1, 2}, std::vector<float>{1.0f})), InvalidArgument);
  log.append(checksum({"k", 0, 1, 1}, std::vector<float>{1.0f}));
  EXPECT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].checksum(), first);
  // A copy views its own names.
  const ChecksumLog copy = log;
  log.clear();
  EXPECT_EQ(copy[1].kernel, "k");
}

}  // namespace
}  // namespace brick::graph
