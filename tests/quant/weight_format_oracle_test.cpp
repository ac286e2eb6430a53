// Differential tests of the Q8_0, F16 and BF16 formats against the live ggml oracle: the weight
// conversions give the bytes ggml_quantize_chunk writes, the activation conversions the bytes
// ggml-cpu's from_float gives (what its mat-vec runs on x), on every backend, and the dequantizers
// ggml's floats, on the quantizer oracle rows plus rows aimed at these formats' own rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "brick/quant/q8_0.hpp"
#include "oracle_rows.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::BlockQ80;
using quant::kQ80BlockSize;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Blocks of 32 aimed at the Q8_0 quantizers: a NaN or an infinity at every position (which lane of
// the activation quantizer's maximum it lands in decides whether it survives), two NaNs, exact
// rounding ties (amax 127 makes the inverse scale 1), subnormal and signed-zero blocks.
std::vector<Row> q8_0_rows() {
  std::vector<Row> out;
  const std::vector<float> base = normal(kQ80BlockSize, 77);
  for (std::size_t p = 0; p < kQ80BlockSize; ++p) {
    for (const float special : {kNan, -kNan, kInf, -kInf}) {
      std::vector<float> x = base;
      x[p] = special;
      out.push_back({"special " + std::to_string(special) + " at " + std::to_string(p), x});
    }
    std::vector<float> two = base;
    two[p] = kNan;
    two[(p + 13) % kQ80BlockSize] = kNan;
    out.push_back({"two NaNs from " + std::to_string(p), two});
  }
  std::vector<float> ties(kQ80BlockSize);
  for (std::size_t i = 0; i < kQ80BlockSize; ++i) ties[i] = (static_cast<float>(i) - 16.0f) * 0.5f;
  ties[3] = 127.0f;
  out.push_back({"ties", ties});
  ties[3] = -127.0f;
  out.push_back({"ties, negative amax", ties});
  out.push_back({"subnormal", std::vector<float>(kQ80BlockSize, 1e-40f)});
  std::vector<float> zeros(kQ80BlockSize, -0.0f);
  zeros[5] = 1e-40f;
  out.push_back({"signed zeros and a subnormal", zeros});
  out.push_back({"all -0", std::vector<float>(kQ80BlockSize, -0.0f)});
  return out;
}

std::vector<Row> all_q8_0_rows() {
  std::vector<Row> all = rows();
  for (Row& row : q8_0_rows()) all.push_back(std::move(row));
  return all;
}

TEST(WeightFormatOracle, Q8_0WeightsAreGgmlsReferenceBytes) {
  const GgmlOracle& oracle = GgmlOracle::load();
  int reported = 0;
  for (const Row& row : all_q8_0_rows()) {
    const std::size_t blocks = row.values.size() / kQ80BlockSize;
    std::vector<BlockQ80> ours(blocks), ggml(blocks);
    quant::quantize_q8_0(row.values, ours);
    oracle.quantize_q8_0_ref(row.values, ggml);
    expect_same_blocks(row, ours, ggml, reported);
    std::vector<float> ours_deq(row.values.size()), ggml_deq(row.values.size());
    quant::dequantize_q8_0(ggml, ours_deq);
    oracle.dequantize_q8_0(ggml, ggml_deq);
    expect_same_floats(row.name + " dequantize", ours_deq, ggml_deq, reported);
    if (reported >= 5) break;
  }
}

TEST(WeightFormatOracle, Q8_0ActivationsAreGgmlCpusBytesOnEveryBackend) {
  const GgmlOracle& oracle = GgmlOracle::load();
  int reported = 0;
  for (const Row& row : all_q8_0_rows()) {
    const std::size_t blocks = row.values.size() / kQ80BlockSize;
    std::vector<BlockQ80> ggml(blocks);
    oracle.quantize_q8_0(row.values, ggml);
    for (const Backend backend : kConcreteBackends) {
      if (!is_supported(backend)) continue;
      std::vector<BlockQ80> ours(blocks);
      std::memset(ours.data(), 0x55, blocks * sizeof(BlockQ80));
      quant::quantize_q8_0_activation(row.values, ours, backend);
      expect_same_blocks({row.name + " " + std::string(name(backend)), row.values}, ours, ggml, reported);
    }
    if (reported >= 5) break;
  }
}

// Arbitrary bytes (any scale, infinities, NaNs and subnormals included) dequantize to ggml's floats.
TEST(WeightFormatOracle, DequantizingArbitraryQ8_0BytesMatchesGgml) {
  const GgmlOracle& oracle = GgmlOracle::load();
  constexpr std::size_t kBlocks = 4000;
  std::vector<BlockQ80> blocks(kBlocks);
  std::mt19937_64 rng(80);
  auto* bytes = reinterpret_cast<unsigned char*>(blocks.data());
  for (std::size_t i = 0; i < sizeof(BlockQ80) * kBlocks; ++i) bytes[i] = static_cast<unsigned char>(rng());
  std::vector<float> ours(kBlocks * kQ80BlockSize), ggml(kBlocks * kQ80BlockSize);
  quant::dequantize_q8_0(blocks, ours);
  oracle.dequantize_q8_0(blocks, ggml);
  int reported = 0;
  expect_same_floats("random Q8_0 bytes", ours, ggml, reported);
}

}  // namespace
}  // namespace brick::test
