// The repacked layouts (sub-block interleaved k-quants, grouped Q8_0): repacking loses nothing
// (blocks round-trip byte for byte and dequantize to the same floats), the activations' permutation
// is its own inverse, bad sizes are typed errors, and every kernel of a layout gives the plain
// kernel's bits on the same values, alone, as rows, as a GEMM and through matvec and the projections.
#include "brick/quant/weight_layout.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/projection_op.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/weight_matrix.hpp"
#include "quant/dot_formats_testing.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/kquant_blocks.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

template <class Block>
bool same_bytes(const std::vector<Block>& a, const std::vector<Block>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Block)) == 0;
}

// Random blocks, then blocks of all-ones bytes (every scale, min and quant at its largest).
template <class Block>
std::vector<Block> test_blocks(std::vector<Block> (*random)(std::size_t, std::uint64_t)) {
  std::vector<Block> blocks = random(40, 11);
  Block ones;
  std::memset(&ones, 0xFF, sizeof ones);
  blocks.push_back(ones);
  return blocks;
}

TEST(WeightLayout, InterleavedPositionIsAPermutationThatUndoesItself) {
  std::vector<bool> seen(kBlockSize);
  for (std::size_t v = 0; v < kBlockSize; ++v) {
    const std::size_t at = interleaved_position(v);
    ASSERT_LT(at, kBlockSize);
    EXPECT_FALSE(seen[at]) << v;
    seen[at] = true;
    EXPECT_EQ(interleaved_position(at), v);
    // Vector at / 32 holds four consecutive values of every sub-block, bytes 4s..4s+3 sub-block s.
    EXPECT_EQ(at % 32 / 4, v / 32) << v;
    EXPECT_EQ(at / 32, v % 32 / 4) << v;
  }
}

// Interleaved and back, the same bytes; returns the interleaved blocks.
template <class Plain, class Interleaved>
std::vector<Interleaved> round_trip(const std::vector<Plain>& plain,
                                    void (*interleave)(std::span<const Plain>, std::span<Interleaved>),
                                    void (*deinterleave)(std::span<const Interleaved>, std::span<Plain>)) {
  std::vector<Interleaved> interleaved(plain.size());
  std::vector<Plain> back(plain.size());
  interleave(plain, interleaved);
  deinterleave(interleaved, back);
  EXPECT_TRUE(same_bytes(plain, back));
  return interleaved;
}

TEST(WeightLayout, BlocksRoundTripByteForByte) {
  round_trip(test_blocks(&test::random_q4k), &interleave_q4k, &deinterleave_q4k);
  round_trip(test_blocks(&test::random_q5k), &interleave_q5k, &deinterleave_q5k);
  const std::vector<BlockQ6K> q6k = test_blocks(&test::random_q6k);
  const std::vector<BlockQ6KInterleaved> interleaved = round_trip(q6k, &interleave_q6k, &deinterleave_q6k);
  EXPECT_EQ(interleaved[0].d, q6k[0].d);
  EXPECT_EQ(std::memcmp(interleaved[0].scales, q6k[0].scales, sizeof q6k[0].scales), 0);
}

TEST(WeightLayout, Q8_0GroupsHoldTheBlocksInOrderAndRoundTrip) {
  const std::vector<BlockQ80> plain = test::FormatTesting<detail::Q80Format>::random_weights(48, 12);
  std::vector<BlockQ80Group> groups(3);
  group_q8_0(plain, groups);
  for (std::size_t b = 0; b < plain.size(); ++b) {
    const BlockQ80Group& group = groups[b / 16];
    EXPECT_EQ(group.d[b % 16], plain[b].d) << b;
    EXPECT_EQ(std::memcmp(group.qs + 32 * (b % 16), plain[b].qs, 32), 0) << b;
  }
  std::vector<BlockQ80> back(plain.size());
  ungroup_q8_0(groups, back);
  EXPECT_TRUE(same_bytes(plain, back));
}

TEST(WeightLayout, InterleavedBlocksHoldTheScalesOneByteEach) {
  const std::vector<BlockQ4K> plain = test::random_q4k(3, 5);
  std::vector<BlockQ4KInterleaved> interleaved(3);
  interleave_q4k(plain, interleaved);
  std::vector<float> values(3 * kBlockSize);
  dequantize_q4k(plain, values);
  for (std::size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(interleaved[b].d, plain[b].d);
    EXPECT_EQ(interleaved[b].dmin, plain[b].dmin);
    for (int j = 0; j < 8; ++j) {
      EXPECT_LE(interleaved[b].scales[j], 63);
      EXPECT_LE(interleaved[b].mins[j], 63);
    }
  }
}

TEST(WeightLayout, Q8KInterleavingRoundTripsAndKeepsScaleAndSums) {
  const std::vector<BlockQ8K> plain = test::random_q8k(5, 3);
  std::vector<BlockQ8KInterleaved> interleaved(plain.size());
  interleave_q8k(plain, interleaved);
  for (std::size_t b = 0; b < plain.size(); ++b) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(interleaved[b].qs) % 32, 0u) << "block " << b;
    EXPECT_EQ(interleaved[b].d, plain[b].d);
    EXPECT_EQ(std::memcmp(interleaved[b].bsums, plain[b].bsums, sizeof plain[b].bsums), 0);
    for (std::size_t v = 0; v < kBlockSize; ++v) ASSERT_EQ(interleaved[b].qs[interleaved_position(v)], plain[b].qs[v]);
  }
  std::vector<BlockQ8K> back(plain.size());
  deinterleave_q8k(interleaved, back);
  EXPECT_TRUE(same_bytes(back, plain));
}

TEST(WeightLayout, MismatchedSizesAreInvalidArguments) {
  const std::vector<BlockQ4K> q4k(2);
  const std::vector<BlockQ5K> q5k(2);
  const std::vector<BlockQ8K> q8k(2);
  std::vector<BlockQ4KInterleaved> q4k_out(3);
  std::vector<BlockQ5KInterleaved> q5k_out(1);
  std::vector<BlockQ8KInterleaved> q8k_out(1);
  EXPECT_THROW(interleave_q4k(q4k, q4k_out), InvalidArgument);
  EXPECT_THROW(interleave_q5k(q5k, q5k_out), InvalidArgument);
  EXPECT_THROW(interleave_q8k(q8k, q8k_out), InvalidArgument);
  EXPECT_THROW(deinterleave_q8k(q8k_out, std::span<BlockQ8K>()), InvalidArgument);
  std::vector<BlockQ4K> back(1);
  EXPECT_THROW(deinterleave_q4k(q4k_out, back), InvalidArgument);
  const std::vector<BlockQ80> q8_0(17);
  std::vector<BlockQ80Group> groups(1);
  EXPECT_THROW(group_q8_0(q8_0, groups), InvalidArgument);
  std::vector<BlockQ80> q8_0_back(15);
  EXPECT_THROW(ungroup_q8_0(groups, q8_0_back), InvalidArgument);
}

TEST(WeightLayout, SizesOfEachTypeAndLayout) {
  EXPECT_EQ(block_bytes(TensorType::Q4_K, WeightLayout::SubBlockInterleaved), 148u);
  EXPECT_EQ(block_bytes(TensorType::Q5_K, WeightLayout::SubBlockInterleaved), 180u);
  EXPECT_EQ(block_bytes(TensorType::Q6_K, WeightLayout::Plain), sizeof(BlockQ6K));
  EXPECT_EQ(block_bytes(TensorType::Q6_K, WeightLayout::SubBlockInterleaved), sizeof(BlockQ6K));
  EXPECT_FALSE(block_bytes(TensorType::Q8_0, WeightLayout::SubBlockInterleaved));
  EXPECT_EQ(row_bytes(TensorType::Q4_K, WeightLayout::SubBlockInterleaved, 4096), 16u * 148u);
  EXPECT_FALSE(row_bytes(TensorType::Q4_K, WeightLayout::SubBlockInterleaved, 100));
  // A group of Q8_0 blocks takes the 16 blocks' bytes.
  EXPECT_EQ(block_bytes(TensorType::Q8_0, WeightLayout::GroupedBlocks), 544u);
  EXPECT_EQ(block_values(TensorType::Q8_0, WeightLayout::GroupedBlocks), 512u);
  EXPECT_EQ(block_values(TensorType::Q8_0, WeightLayout::Plain), 32u);
  EXPECT_EQ(row_bytes(TensorType::Q8_0, WeightLayout::GroupedBlocks, 4096), row_bytes(TensorType::Q8_0, 4096));
  EXPECT_FALSE(row_bytes(TensorType::Q8_0, WeightLayout::GroupedBlocks, 4096 + 32));
  EXPECT_FALSE(block_bytes(TensorType::Q4_K, WeightLayout::GroupedBlocks));
  EXPECT_FALSE(block_values(TensorType::Q6_K, WeightLayout::GroupedBlocks));
}

TEST(WeightLayout, RepackedMatricesDequantizeToThePlainFloats) {
  const std::vector<BlockQ4K> q4k = test::random_q4k(6, 7);
  const std::vector<BlockQ5K> q5k = test::random_q5k(6, 8);
  const std::vector<BlockQ6K> q6k = test::random_q6k(6, 9);
  const std::vector<BlockQ80> q8_0 = test::FormatTesting<detail::Q80Format>::random_weights(48, 10);
  const std::pair<WeightMatrix, WeightLayout> cases[] = {
      {Q4KMatrix{q4k, 3, 512}, WeightLayout::SubBlockInterleaved},
      {Q5KMatrix{q5k, 3, 512}, WeightLayout::SubBlockInterleaved},
      {Q6KMatrix{q6k, 3, 512}, WeightLayout::SubBlockInterleaved},
      {Q80Matrix{q8_0, 3, 512}, WeightLayout::GroupedBlocks}};
  for (const auto& [plain, layout] : cases) {
    const RepackedMatrix repacked(plain, layout);
    const WeightMatrix& w = repacked.matrix();
    EXPECT_EQ(w.layout(), layout);
    EXPECT_EQ(w.type(), plain.type());
    EXPECT_EQ(w.row_bytes(), *row_bytes(plain.type(), layout, 512));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data().data()) % 64, 0u) << "a repacked matrix starts on a cache line";
    EXPECT_NO_THROW(validate(w, "w"));
    std::vector<float> expected(512), got(512);
    for (std::size_t r = 0; r < 3; ++r) {
      dequantize_row(plain, r, expected);
      dequantize_row(w, r, got);
      EXPECT_EQ(got, expected) << name(plain.type()) << " row " << r;
    }
    const RepackedMatrix back(w, WeightLayout::Plain);
    EXPECT_TRUE(std::equal(back.matrix().data().begin(), back.matrix().data().end(), plain.data().begin(),
                           plain.data().end()));
    // The pool's threads repack the same bytes.
    ThreadPool pool(2);
    const RepackedMatrix pooled(plain, layout, &pool);
    EXPECT_TRUE(std::equal(pooled.matrix().data().begin(), pooled.matrix().data().end(), w.data().begin(),
                           w.data().end()));
  }
}

TEST(WeightLayout, LayoutsATypeDoesNotHaveAreRefused) {
  // Neither repacked into `layout` nor taken as already in it.
  const auto refused = [](const WeightMatrix& plain, WeightLayout layout) {
    EXPECT_THROW(RepackedMatrix(plain, layout), InvalidArgument) << name(plain.type()) << " " << name(layout);
    const WeightMatrix mislabelled(plain.type(), plain.data(), plain.rows(), plain.cols(), layout);
    EXPECT_THROW(validate(mislabelled, "w"), InvalidArgument) << name(plain.type()) << " " << name(layout);
  };
  const std::vector<BlockQ80> q8_0(16);
  refused(Q80Matrix{q8_0, 1, 512}, WeightLayout::SubBlockInterleaved);
  const std::vector<BlockQ4K> q4k(2);
  refused(Q4KMatrix{q4k, 1, 512}, WeightLayout::GroupedBlocks);
  // Rows that are not whole groups of 16 blocks.
  const std::vector<BlockQ80> short_rows(34);
  refused(Q80Matrix{short_rows, 2, 544}, WeightLayout::GroupedBlocks);
}

TEST(WeightLayout, Avx2PrefersRepackedLayouts) {
  if (!is_supported(Backend::Avx2)) GTEST_SKIP() << "this CPU has no AVX2";
  EXPECT_EQ(preferred_layout(TensorType::Q4_K, Backend::Avx2), WeightLayout::SubBlockInterleaved);
  EXPECT_EQ(preferred_layout(TensorType::Q5_K, Backend::Avx2), WeightLayout::SubBlockInterleaved);
  EXPECT_EQ(preferred_layout(TensorType::Q6_K, Backend::Avx2), WeightLayout::SubBlockInterleaved);
  EXPECT_EQ(preferred_layout(TensorType::Q8_0, Backend::Avx2), WeightLayout::GroupedBlocks);
  EXPECT_EQ(preferred_layout(TensorType::Q8_0, Backend::Scalar), WeightLayout::Plain);
  EXPECT_EQ(preferred_layout(TensorType::Q4_K, Backend::Scalar), WeightLayout::Plain);
  if (is_supported(Backend::Avx512)) {
    EXPECT_EQ(preferred_layout(TensorType::Q4_K, Backend::Avx512), WeightLayout::Plain);
    // Grouped Q8_0 where its AVX-512 VNNI kernels run; the F/BW line is the AVX2 kernels'.
    EXPECT_EQ(preferred_layout(TensorType::Q8_0, Backend::Avx512),
              detail::is_supported(detail::Isa::Avx512Vnni) ? WeightLayout::GroupedBlocks : WeightLayout::Plain);
  } else {
    std::cout << "[  SKIPPED ] the AVX-512 layouts: this CPU has no AVX-512\n";
  }
}

// The plain kernel whose arithmetic an interleaved kernel repeats: the AVX-512 lines are the AVX2
// kernels built for AVX-512.
detail::Isa plain_twin(detail::Isa isa) { return isa == detail::Isa::Avx512 ? detail::Isa::Avx2 : isa; }

// The plain format's random rows; x as `activations` makes them, w and x repacked by repack_w and
// repack_x. Lengths are of the repacked format's blocks.
template <class Plain, class Repacked, class Activations, class RepackW, class RepackX>
void expect_plain_bits(Activations activations, RepackW repack_w, RepackX repack_x,
                       std::initializer_list<std::size_t> lengths) {
  constexpr std::size_t kRatio = Repacked::kValues / Plain::kValues;
  for (const auto& kernel : detail::kDotKernels<Repacked>) {
    if (const auto missing = detail::missing_feature(kernel.isa)) {
      std::cout << "[  SKIPPED ] " << kernel.name << " needs " << *missing << "\n";
      continue;
    }
    const auto& plain = *detail::find_kernel<Plain>(plain_twin(kernel.isa));
    for (const std::size_t blocks : lengths) {
      constexpr std::size_t kRows = 5, kTokens = 9;
      const std::size_t plain_blocks = blocks * kRatio;
      const auto w = test::FormatTesting<Plain>::random_weights(kRows * plain_blocks, blocks);
      const auto x = activations(kTokens * plain_blocks, blocks + 1);
      const std::vector<typename Repacked::Weight> wi = repack_w(w);
      const std::vector<typename Repacked::Activation> xi = repack_x(x);
      std::vector<float> ours(kRows * kTokens), theirs(kRows * kTokens);
      kernel.tokens(wi.data(), kRows, xi.data(), kTokens, blocks, ours.data(), kRows);
      plain.tokens(w.data(), kRows, x.data(), kTokens, plain_blocks, theirs.data(), kRows);
      for (std::size_t t = 0; t < kTokens; ++t) {
        for (std::size_t r = 0; r < kRows; ++r) {
          const float row = kernel.row(wi.data() + r * blocks, xi.data() + t * blocks, blocks);
          const float plain_row = plain.row(w.data() + r * plain_blocks, x.data() + t * plain_blocks, plain_blocks);
          ASSERT_EQ(std::bit_cast<std::uint32_t>(row), std::bit_cast<std::uint32_t>(plain_row))
              << kernel.name << " vs " << plain.name << " blocks " << blocks << " row " << r << " token " << t;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(ours[t * kRows + r]), std::bit_cast<std::uint32_t>(theirs[t * kRows + r]))
              << kernel.gemm_name << " vs " << plain.gemm_name << " blocks " << blocks << " row " << r << " token " << t;
        }
      }
    }
  }
}

// Blocks into another layout through `convert` (interleave_q4k, group_q8_0, ...).
template <class Out, class In>
std::vector<Out> repacked(const std::vector<In>& in, void (*convert)(std::span<const In>, std::span<Out>)) {
  std::vector<Out> out(std::is_same_v<Out, BlockQ80Group> ? in.size() / BlockQ80Group::kBlocks : in.size());
  convert(in, out);
  return out;
}

template <class Plain, class Interleaved>
void expect_interleaved_plain_bits(void (*interleave)(std::span<const typename Plain::Weight>,
                                                      std::span<typename Interleaved::Weight>)) {
  expect_plain_bits<Plain, Interleaved>(
      &test::FormatTesting<Plain>::random_activations, [&](const auto& w) { return repacked(w, interleave); },
      [](const std::vector<BlockQ8K>& x) { return repacked(x, &interleave_q8k); }, {1, 3, 4, 9, 16});
}

TEST(WeightLayout, InterleavedKernelsGiveThePlainKernelsBits) {
  expect_interleaved_plain_bits<detail::Q4KFormat, detail::Q4KInterleavedFormat>(&interleave_q4k);
  expect_interleaved_plain_bits<detail::Q5KFormat, detail::Q5KInterleavedFormat>(&interleave_q5k);
  expect_interleaved_plain_bits<detail::Q6KFormat, detail::Q6KInterleavedFormat>(&interleave_q6k);
}

// Activations with no -128 but in one token (the GEMM's tiles and its widened path).
std::vector<BlockQ80> q8_0_activations(std::size_t blocks, std::uint64_t seed) {
  std::vector<BlockQ80> x = test::FormatTesting<detail::Q80Format>::random_blocks(blocks, seed, -127, 127);
  x[x.size() / 2].qs[5] = -128;
  return x;
}

TEST(WeightLayout, GroupedKernelsGiveThePlainKernelsBits) {
  const auto group = [](const std::vector<BlockQ80>& blocks) { return repacked(blocks, &group_q8_0); };
  expect_plain_bits<detail::Q80Format, detail::Q80GroupedFormat>(&q8_0_activations, group, group, {1, 2, 3, 5});
}

// matvec, with x as floats and as Q8_K, and a projection of one token and of a batch: a repacked
// matrix gives the plain one's bits on the scalar and AVX2 backends.
TEST(WeightLayout, MatvecAndProjectionsOfRepackedMatricesGiveThePlainBits) {
  ThreadPool pool(2);
  constexpr std::size_t kRows = 37, kCols = 1024, kTokens = 12;
  const std::vector<BlockQ4K> q4k = test::random_q4k(kRows * kCols / kBlockSize, 21);
  const std::vector<BlockQ5K> q5k = test::random_q5k(kRows * kCols / kBlockSize, 22);
  const std::vector<BlockQ6K> q6k = test::random_q6k(kRows * kCols / kBlockSize, 24);
  const std::vector<float> x = test::normal(kTokens * kCols, 23);
  const std::span<const float> token(x.data(), kCols);
  std::vector<BlockQ8K> xq(kCols / kBlockSize);
  quantize_q8k(token, xq);
  for (const WeightMatrix plain : {WeightMatrix(Q4KMatrix{q4k, kRows, kCols}), WeightMatrix(Q5KMatrix{q5k, kRows, kCols}),
                                   WeightMatrix(Q6KMatrix{q6k, kRows, kCols})}) {
    const RepackedMatrix repacked(plain, WeightLayout::SubBlockInterleaved);
    for (const Backend backend : {Backend::Scalar, Backend::Avx2}) {
      if (!is_supported(backend)) {
        std::cout << "[  SKIPPED ] " << name(backend) << ": this CPU cannot run it\n";
        continue;
      }
      std::vector<float> expected(kRows), got(kRows);
      matvec(plain, token, expected, pool, backend);
      matvec(repacked.matrix(), token, got, pool, backend);
      EXPECT_EQ(got, expected) << name(plain.type()) << " " << name(backend);
      matvec(repacked.matrix(), std::span<const BlockQ8K>(xq), got, pool, backend);
      EXPECT_EQ(got, expected) << name(plain.type()) << " " << name(backend) << " Q8_K";
      const ProjectionOp plain_op(BrickId::OutputProjection, "plain", plain, pool);
      const ProjectionOp repacked_op(BrickId::OutputProjection, "repacked", repacked.matrix(), pool);
      std::vector<float> batch_expected(kTokens * kRows), batch_got(kTokens * kRows);
      plain_op.run({x, kTokens}, batch_expected, backend);
      repacked_op.run({x, kTokens}, batch_got, backend);
      EXPECT_EQ(batch_got, batch_expected) << name(plain.type()) << " " << name(backend) << " batch";
      EXPECT_EQ(std::vector<float>(batch_got.begin(), batch_got.begin() + kRows), expected);
    }
  }
}

// Grouped Q8_0 through matvec and the projections: the bits of the plain kernel that the backend's
// grouped line repeats (the AVX2 or AVX-VNNI one on the AVX2 backend, the AVX2 or AVX-512 VNNI one on
// the AVX-512 backend).
TEST(WeightLayout, MatvecAndProjectionsOfGroupedQ8_0GiveThePlainKernelsBits) {
  ThreadPool pool(2);
  constexpr std::size_t kRows = 37, kCols = 1024, kTokens = 12, kBlocks = kCols / kQ80BlockSize;
  const std::vector<BlockQ80> blocks = test::FormatTesting<detail::Q80Format>::random_weights(kRows * kBlocks, 25);
  const WeightMatrix plain = Q80Matrix{blocks, kRows, kCols};
  const RepackedMatrix grouped(plain, WeightLayout::GroupedBlocks);
  const std::vector<float> x = test::normal(kTokens * kCols, 26);
  std::vector<BlockQ80> xq(kTokens * kBlocks);
  quantize_q8_0_activation(x, xq);
  for (const Backend backend : {Backend::Scalar, Backend::Avx2, Backend::Avx512}) {
    if (!is_supported(backend)) {
      std::cout << "[  SKIPPED ] " << name(backend) << ": this CPU cannot run it\n";
      continue;
    }
    const auto& twin = *detail::find_kernel<detail::Q80Format>(
        plain_twin(detail::select_kernel<detail::Q80GroupedFormat>(backend).isa));
    std::vector<float> expected(kTokens * kRows);
    for (std::size_t t = 0; t < kTokens; ++t) {
      for (std::size_t r = 0; r < kRows; ++r) {
        expected[t * kRows + r] = twin.row(blocks.data() + r * kBlocks, xq.data() + t * kBlocks, kBlocks);
      }
    }
    std::vector<float> got(kRows);
    matvec(grouped.matrix(), std::span(x.data(), kCols), got, pool, backend);
    EXPECT_EQ(got, std::vector<float>(expected.begin(), expected.begin() + kRows)) << twin.name;
    const ProjectionOp op(BrickId::OutputProjection, "grouped", grouped.matrix(), pool);
    std::vector<float> batch(kTokens * kRows);
    op.run({x, kTokens}, batch, backend);
    EXPECT_EQ(batch, expected) << twin.gemm_name;
  }
}

}  // namespace
}  // namespace brick::quant
