// The sub-block interleaved layout: repacking loses nothing (blocks round-trip byte for byte and
// dequantize to the same floats), the activations' permutation is its own inverse, bad sizes are
// typed errors, and every kernel of the layout gives the plain kernel's bits on the same values,
// alone, as rows, as a GEMM and through matvec and the projections.
#include "brick/quant/weight_layout.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <numeric>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/projection_op.hpp"
#include "brick/quant/weight_matrix.hpp"
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

TEST(WeightLayout, Q8KPermutationUndoesItselfAndKeepsScaleAndSums) {
  const std::vector<BlockQ8K> plain = test::random_q8k(5, 3);
  std::vector<BlockQ8K> once(plain.size());
  interleave_q8k(plain, once);
  for (std::size_t b = 0; b < plain.size(); ++b) {
    EXPECT_EQ(once[b].d, plain[b].d);
    EXPECT_EQ(std::memcmp(once[b].bsums, plain[b].bsums, sizeof plain[b].bsums), 0);
    for (std::size_t v = 0; v < kBlockSize; ++v) ASSERT_EQ(once[b].qs[interleaved_position(v)], plain[b].qs[v]);
  }
  std::vector<BlockQ8K> twice = once;
  interleave_q8k(twice, twice);  // in place
  EXPECT_TRUE(same_bytes(twice, plain));
}

TEST(WeightLayout, MismatchedSizesAreInvalidArguments) {
  const std::vector<BlockQ4K> q4k(2);
  const std::vector<BlockQ5K> q5k(2);
  const std::vector<BlockQ8K> q8k(2);
  std::vector<BlockQ4KInterleaved> q4k_out(3);
  std::vector<BlockQ5KInterleaved> q5k_out(1);
  std::vector<BlockQ8K> q8k_out(1);
  EXPECT_THROW(interleave_q4k(q4k, q4k_out), InvalidArgument);
  EXPECT_THROW(interleave_q5k(q5k, q5k_out), InvalidArgument);
  EXPECT_THROW(interleave_q8k(q8k, q8k_out), InvalidArgument);
  std::vector<BlockQ4K> back(1);
  EXPECT_THROW(deinterleave_q4k(q4k_out, back), InvalidArgument);
}

TEST(WeightLayout, SizesOfEachTypeAndLayout) {
  EXPECT_EQ(block_bytes(TensorType::Q4_K, WeightLayout::SubBlockInterleaved), 148u);
  EXPECT_EQ(block_bytes(TensorType::Q5_K, WeightLayout::SubBlockInterleaved), 180u);
  EXPECT_EQ(block_bytes(TensorType::Q6_K, WeightLayout::Plain), sizeof(BlockQ6K));
  EXPECT_EQ(block_bytes(TensorType::Q6_K, WeightLayout::SubBlockInterleaved), sizeof(BlockQ6K));
  EXPECT_FALSE(block_bytes(TensorType::Q8_0, WeightLayout::SubBlockInterleaved));
  EXPECT_EQ(row_bytes(TensorType::Q4_K, WeightLayout::SubBlockInterleaved, 4096), 16u * 148u);
  EXPECT_FALSE(row_bytes(TensorType::Q4_K, WeightLayout::SubBlockInterleaved, 100));
}

TEST(WeightLayout, RepackedMatricesDequantizeToThePlainFloats) {
  const std::vector<BlockQ4K> q4k = test::random_q4k(6, 7);
  const std::vector<BlockQ5K> q5k = test::random_q5k(6, 8);
  const std::vector<BlockQ6K> q6k = test::random_q6k(6, 9);
  for (const WeightMatrix plain : {WeightMatrix(Q4KMatrix{q4k, 3, 512}), WeightMatrix(Q5KMatrix{q5k, 3, 512}),
                                   WeightMatrix(Q6KMatrix{q6k, 3, 512})}) {
    const RepackedMatrix repacked(plain, WeightLayout::SubBlockInterleaved);
    const WeightMatrix& w = repacked.matrix();
    EXPECT_EQ(w.layout(), WeightLayout::SubBlockInterleaved);
    EXPECT_EQ(w.type(), plain.type());
    EXPECT_EQ(w.row_bytes(), *row_bytes(plain.type(), WeightLayout::SubBlockInterleaved, 512));
    EXPECT_NO_THROW(validate(w, "w"));
    std::vector<float> expected(512), got(512);
    for (std::size_t r = 0; r < 3; ++r) {
      dequantize_row(plain, r, expected);
      dequantize_row(w, r, got);
      EXPECT_EQ(got, expected) << name(plain.type()) << " row " << r;
    }
    const RepackedMatrix back(w, WeightLayout::Plain);
    EXPECT_TRUE(std::equal(back.matrix().data().begin(), back.matrix().data().end(), plain.data().begin()));
    // The pool's threads repack the same bytes.
    ThreadPool pool(2);
    const RepackedMatrix pooled(plain, WeightLayout::SubBlockInterleaved, &pool);
    EXPECT_TRUE(std::equal(pooled.matrix().data().begin(), pooled.matrix().data().end(), w.data().begin(),
                           w.data().end()));
  }
}

TEST(WeightLayout, LayoutsATypeDoesNotHaveAreRefused) {
  const std::vector<BlockQ80> q8_0(16);
  const WeightMatrix plain = Q80Matrix{q8_0, 1, 512};
  EXPECT_THROW(RepackedMatrix(plain, WeightLayout::SubBlockInterleaved), InvalidArgument);
  const WeightMatrix mislabelled(TensorType::Q8_0, std::as_bytes(std::span(q8_0)), 1, 512,
                                 WeightLayout::SubBlockInterleaved);
  EXPECT_THROW(validate(mislabelled, "w"), InvalidArgument);
}

TEST(WeightLayout, Avx2PrefersInterleavedKQuants) {
  if (!is_supported(Backend::Avx2)) GTEST_SKIP() << "this CPU has no AVX2";
  EXPECT_EQ(preferred_layout(TensorType::Q4_K, Backend::Avx2), WeightLayout::SubBlockInterleaved);
  EXPECT_EQ(preferred_layout(TensorType::Q5_K, Backend::Avx2), WeightLayout::SubBlockInterleaved);
  EXPECT_EQ(preferred_layout(TensorType::Q6_K, Backend::Avx2), WeightLayout::SubBlockInterleaved);
  EXPECT_EQ(preferred_layout(TensorType::Q8_0, Backend::Avx2), WeightLayout::Plain);
  EXPECT_EQ(preferred_layout(TensorType::Q4_K, Backend::Scalar), WeightLayout::Plain);
  if (is_supported(Backend::Avx512)) {
    EXPECT_EQ(preferred_layout(TensorType::Q4_K, Backend::Avx512), WeightLayout::Plain);
  }
}

// The plain kernel whose arithmetic an interleaved kernel repeats: the AVX-512 lines are the AVX2
// kernels built for AVX-512.
detail::Isa plain_twin(detail::Isa isa) { return isa == detail::Isa::Avx512 ? detail::Isa::Avx2 : isa; }

template <class Plain, class Interleaved, class InterleaveFn>
void expect_plain_bits(std::vector<typename Plain::Weight> (*random)(std::size_t, std::uint64_t), InterleaveFn interleave) {
  for (const auto& kernel : detail::kDotKernels<Interleaved>) {
    if (const auto missing = detail::missing_feature(kernel.isa)) {
      std::cout << "[  SKIPPED ] " << kernel.name << " needs " << *missing << "\n";
      continue;
    }
    const auto& plain = *detail::find_kernel<Plain>(plain_twin(kernel.isa));
    for (const std::size_t blocks : {1u, 3u, 4u, 9u, 16u}) {
      constexpr std::size_t kRows = 5, kTokens = 9;
      const auto w = random(kRows * blocks, blocks);
      std::vector<typename Interleaved::Weight> wi(w.size());
      interleave(w, wi);
      const auto x = test::random_q8k(kTokens * blocks, blocks + 1);
      std::vector<BlockQ8K> xi(x.size());
      interleave_q8k(x, xi);
      std::vector<float> ours(kRows * kTokens), theirs(kRows * kTokens);
      kernel.tokens(wi.data(), kRows, xi.data(), kTokens, blocks, ours.data(), kRows);
      plain.tokens(w.data(), kRows, x.data(), kTokens, blocks, theirs.data(), kRows);
      for (std::size_t t = 0; t < kTokens; ++t) {
        for (std::size_t r = 0; r < kRows; ++r) {
          const float row = kernel.row(wi.data() + r * blocks, xi.data() + t * blocks, blocks);
          const float plain_row = plain.row(w.data() + r * blocks, x.data() + t * blocks, blocks);
          ASSERT_EQ(std::bit_cast<std::uint32_t>(row), std::bit_cast<std::uint32_t>(plain_row))
              << kernel.name << " vs " << plain.name << " blocks " << blocks << " row " << r << " token " << t;
          ASSERT_EQ(std::bit_cast<std::uint32_t>(ours[t * kRows + r]), std::bit_cast<std::uint32_t>(theirs[t * kRows + r]))
              << kernel.gemm_name << " vs " << plain.gemm_name << " blocks " << blocks << " row " << r << " token " << t;
        }
      }
    }
  }
}

TEST(WeightLayout, InterleavedKernelsGiveThePlainKernelsBits) {
  expect_plain_bits<detail::Q4KFormat, detail::Q4KInterleavedFormat>(&test::random_q4k, &interleave_q4k);
  expect_plain_bits<detail::Q5KFormat, detail::Q5KInterleavedFormat>(&test::random_q5k, &interleave_q5k);
  expect_plain_bits<detail::Q6KFormat, detail::Q6KInterleavedFormat>(&test::random_q6k, &interleave_q6k);
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

}  // namespace
}  // namespace brick::quant
