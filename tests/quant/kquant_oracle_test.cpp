// Differential tests against the live ggml oracle (tests/support/ggml_oracle.hpp): on thousands of
// rows of random, adversarial and structured data, Brick's quantizers produce ggml's bytes and its
// dequantizers ggml's floats, bit for bit. Without the oracle these tests fail and say how to
// install it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "brick/quant/kquants.hpp"
#include "kquant_testing.hpp"
#include "oracle_rows.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::BlockQ4K;
using quant::BlockQ5K;
using quant::BlockQ6K;
using quant::BlockQ8K;
using quant::kBlockSize;

class KQuantOracle : public ::testing::Test {
 protected:
  void SetUp() override { oracle_ = &GgmlOracle::load(); }
  const GgmlOracle& oracle() const { return *oracle_; }

 private:
  const GgmlOracle* oracle_ = nullptr;
};

TEST_F(KQuantOracle, RowSetIsLargeAndCoversAllLengths) {
  EXPECT_GE(rows().size(), 2000u);
  EXPECT_GE(total_blocks(), 3000u);
  bool has_16384 = false;
  for (const Row& row : rows()) has_16384 |= row.values.size() == 16384;
  EXPECT_TRUE(has_16384);
}

// Brick's quantizer and dequantizer of one type against ggml's on every row.
template <typename Block>
void expect_quantizer_matches(void (*ours)(std::span<const float>, std::span<Block>),
                              void (GgmlOracle::*ggml)(std::span<const float>, std::span<Block>) const,
                              void (*ours_deq)(std::span<const Block>, std::span<float>),
                              void (GgmlOracle::*ggml_deq)(std::span<const Block>, std::span<float>) const) {
  const GgmlOracle& oracle = GgmlOracle::load();
  int reported = 0;
  for (const Row& row : rows()) {
    const std::size_t blocks = row.values.size() / kBlockSize;
    std::vector<Block> mine(blocks), theirs(blocks);
    ours(row.values, mine);
    (oracle.*ggml)(row.values, theirs);
    expect_same_blocks(row, mine, theirs, reported);
    std::vector<float> mine_deq(row.values.size()), theirs_deq(row.values.size());
    ours_deq(theirs, mine_deq);
    (oracle.*ggml_deq)(theirs, theirs_deq);
    expect_same_floats(row.name + " dequantize", mine_deq, theirs_deq, reported);
    if (reported >= 5) break;
  }
}

TEST_F(KQuantOracle, Q4KQuantizeAndDequantizeMatchGgml) {
  expect_quantizer_matches<BlockQ4K>(quant::quantize_q4k, &GgmlOracle::quantize_q4k_ref, quant::dequantize_q4k,
                                     &GgmlOracle::dequantize_q4k);
}

TEST_F(KQuantOracle, Q5KQuantizeAndDequantizeMatchGgml) {
  expect_quantizer_matches<BlockQ5K>(quant::quantize_q5k, &GgmlOracle::quantize_q5k_ref, quant::dequantize_q5k,
                                     &GgmlOracle::dequantize_q5k);
}

TEST_F(KQuantOracle, Q6KQuantizeAndDequantizeMatchGgml) {
  expect_quantizer_matches<BlockQ6K>(quant::quantize_q6k, &GgmlOracle::quantize_q6k_ref, quant::dequantize_q6k,
                                     &GgmlOracle::dequantize_q6k);
}

// Both of ggml's Q8_K quantizers: the reference in libggml-base and the one the CPU library's
// matmul uses, against every backend's quantize_q8k. ggml leaves bsums unwritten for an all-zero
// block; its buffers start zeroed so that Brick's definition (0) is what is compared.
TEST_F(KQuantOracle, Q8KQuantizeAndDequantizeMatchGgmlOnEveryBackend) {
  int reported = 0;
  for (const Row& row : rows()) {
    const std::size_t blocks = row.values.size() / kBlockSize;
    std::vector<BlockQ8K> ggml_ref(blocks), ggml_cpu(blocks);
    std::memset(ggml_ref.data(), 0, blocks * sizeof(BlockQ8K));
    std::memset(ggml_cpu.data(), 0, blocks * sizeof(BlockQ8K));
    oracle().quantize_q8k_ref(row.values, ggml_ref);
    oracle().quantize_q8k(row.values, ggml_cpu);
    expect_same_blocks(row, ggml_cpu, ggml_ref, reported);
    for (const Backend backend : kConcreteBackends) {
      if (!is_supported(backend)) continue;
      std::vector<BlockQ8K> ours(blocks);
      std::memset(ours.data(), 0xFF, blocks * sizeof(BlockQ8K));
      quant::quantize_q8k(row.values, ours, backend);
      expect_same_blocks({row.name + " " + std::string(name(backend)), row.values}, ours, ggml_ref, reported);
    }
    std::vector<float> ours_deq(row.values.size()), ggml_deq(row.values.size());
    quant::dequantize_q8k(ggml_ref, ours_deq);
    oracle().dequantize_q8k(ggml_ref, ggml_deq);
    expect_same_floats(row.name + " dequantize", ours_deq, ggml_deq, reported);
    if (reported >= 5) break;
  }
}

// What llama-quantize writes into a model file (ggml_quantize_chunk, no importance matrix) for a
// whole matrix is what Brick writes.
TEST_F(KQuantOracle, MatrixQuantizationMatchesGgmlQuantizeChunk) {
  constexpr std::size_t kRows = 32, kCols = 4096;
  const std::vector<float> w = normal(kRows * kCols, 99, 0.0f, 0.02f);
  std::vector<BlockQ4K> q4(w.size() / kBlockSize);
  std::vector<BlockQ5K> q5(w.size() / kBlockSize), q5_ggml(w.size() / kBlockSize);
  std::vector<BlockQ6K> q6(w.size() / kBlockSize), q6_ggml(w.size() / kBlockSize);
  quant::quantize_q4k(w, q4);
  quant::quantize_q5k(w, q5);
  quant::quantize_q6k(w, q6);
  const std::vector<std::byte> q4_chunk = oracle().quantize_chunk(GgmlType::Q4_K, w, kCols);
  ASSERT_EQ(q4_chunk.size(), q4.size() * sizeof(BlockQ4K));
  EXPECT_EQ(std::memcmp(q4.data(), q4_chunk.data(), q4_chunk.size()), 0);
  oracle().quantize_chunk_q5k(w, kCols, q5_ggml);
  oracle().quantize_chunk_q6k(w, kCols, q6_ggml);
  EXPECT_EQ(std::memcmp(q5.data(), q5_ggml.data(), q5.size() * sizeof(BlockQ5K)), 0);
  EXPECT_EQ(std::memcmp(q6.data(), q6_ggml.data(), q6.size() * sizeof(BlockQ6K)), 0);
}

// Dequantization of arbitrary bytes (any scales, including fp16 infinities, NaNs and subnormals,
// any packed sub-scales and quants) gives ggml's floats bit for bit.
template <typename Block>
std::vector<Block> random_blocks(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Block> blocks(count);
  auto* bytes = reinterpret_cast<unsigned char*>(blocks.data());
  for (std::size_t i = 0; i < count * sizeof(Block); ++i)
    bytes[i] = static_cast<unsigned char>(rng());
  return blocks;
}

TEST_F(KQuantOracle, DequantizingArbitraryBytesMatchesGgml) {
  constexpr std::size_t kBlocks = 2000;
  int reported = 0;
  {
    const auto blocks = random_blocks<BlockQ4K>(kBlocks, 4);
    std::vector<float> ours(kBlocks * kBlockSize), ggml(kBlocks * kBlockSize);
    quant::dequantize_q4k(blocks, ours);
    oracle().dequantize_q4k(blocks, ggml);
    expect_same_floats("random Q4_K bytes", ours, ggml, reported);
  }
  {
    const auto blocks = random_blocks<BlockQ5K>(kBlocks, 5);
    std::vector<float> ours(kBlocks * kBlockSize), ggml(kBlocks * kBlockSize);
    quant::dequantize_q5k(blocks, ours);
    oracle().dequantize_q5k(blocks, ggml);
    expect_same_floats("random Q5_K bytes", ours, ggml, reported);
  }
  {
    const auto blocks = random_blocks<BlockQ6K>(kBlocks, 6);
    std::vector<float> ours(kBlocks * kBlockSize), ggml(kBlocks * kBlockSize);
    quant::dequantize_q6k(blocks, ours);
    oracle().dequantize_q6k(blocks, ggml);
    expect_same_floats("random Q6_K bytes", ours, ggml, reported);
  }
  {
    const auto blocks = random_blocks<BlockQ8K>(kBlocks, 8);
    std::vector<float> ours(kBlocks * kBlockSize), ggml(kBlocks * kBlockSize);
    quant::dequantize_q8k(blocks, ours);
    oracle().dequantize_q8k(blocks, ggml);
    expect_same_floats("random Q8_K bytes", ours, ggml, reported);
  }
}

}  // namespace
}  // namespace brick::test
