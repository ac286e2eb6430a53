// Differential tests of the Q8_0, F16 and BF16 formats against the live ggml oracle: the weight
// conversions give the bytes ggml_quantize_chunk writes, the activation conversions the bytes
// ggml-cpu's from_float gives (what its mat-vec runs on x), on every backend, and the dequantizers
// ggml's floats, on the quantizer oracle rows plus rows aimed at these formats' own rules; and
// quantize() writes ggml_quantize_chunk's bytes for every type it writes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "brick/quant/bf16.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/quantize.hpp"
#include "brick/quant/tensor_type.hpp"
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

// Floats of every kind for the 16-bit conversions: random bit patterns (NaNs with payloads of both
// signs, infinities, subnormals, values beyond fp16's range), the exact midpoints between
// neighbouring bf16 and fp16 values and their float neighbours, in an order that puts specials at
// every position of a SIMD vector.
std::vector<float> bit_patterns() {
  std::vector<float> floats;
  std::mt19937 rng(2025);
  for (int i = 0; i < 100000; ++i) floats.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  for (std::uint32_t top = 0; top < 0x10000; top += 7) {
    const std::uint32_t tie = (top << 16) | 0x8000u;  // halfway between two bf16 values
    for (const std::uint32_t bits : {tie - 1, tie, tie + 1}) floats.push_back(std::bit_cast<float>(bits));
  }
  for (std::uint32_t h = 0; h < 0x7C00; h += 3) {
    const float value = quant::fp16_to_fp32(static_cast<quant::fp16_t>(h));
    const float midpoint = value + (quant::fp16_to_fp32(static_cast<quant::fp16_t>(h + 1)) - value) / 2;
    floats.push_back(midpoint);
    floats.push_back(-midpoint);
  }
  floats.insert(floats.end(), {0.0f, -0.0f, kInf, -kInf, kNan, -kNan, 65504.0f, 65520.0f, 3.4e38f});
  return floats;
}

// Every length up to 67 (all of ggml-cpu's vector and scalar tails) and a long one.
std::vector<std::size_t> row_lengths() {
  std::vector<std::size_t> lengths;
  for (std::size_t n = 1; n <= 67; ++n) lengths.push_back(n);
  lengths.push_back(4099);
  return lengths;
}

template <class Half>
::testing::AssertionResult same_halves(std::span<const Half> ours, std::span<const Half> ggml) {
  for (std::size_t i = 0; i < ours.size(); ++i) {
    if (ours[i] != ggml[i]) {
      return ::testing::AssertionFailure() << fmt::format("value {}: ours {:#06x}, ggml {:#06x}", i, ours[i], ggml[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(WeightFormatOracle, F16AndBF16WeightsAreGgmlQuantizeChunksBytes) {
  const GgmlOracle& oracle = GgmlOracle::load();
  const std::vector<float> floats = bit_patterns();
  for (const quant::TensorType type : {quant::TensorType::F16, quant::TensorType::BF16}) {
    std::vector<std::byte> ours(floats.size() * 2);
    quant::quantize(type, floats, floats.size(), ours);
    const GgmlType ggml_type = type == quant::TensorType::F16 ? GgmlType::F16 : GgmlType::BF16;
    const std::vector<std::byte> ggml = oracle.quantize_chunk(ggml_type, floats, floats.size());
    EXPECT_TRUE(same_halves<std::uint16_t>({reinterpret_cast<const std::uint16_t*>(ours.data()), floats.size()},
                                           {reinterpret_cast<const std::uint16_t*>(ggml.data()), floats.size()}))
        << quant::name(type);
  }
  std::vector<quant::bf16_t> ref(floats.size());
  oracle.ggml_fp32_to_bf16_row_ref(floats.data(), ref.data(), static_cast<std::int64_t>(floats.size()));
  for (const Backend backend : kConcreteBackends) {
    if (!is_supported(backend)) continue;
    std::vector<quant::bf16_t> ours(floats.size());
    quant::fp32_to_bf16_row(floats, ours, backend);
    EXPECT_TRUE(same_halves<quant::bf16_t>(ours, ref)) << name(backend);
  }
}

// What ggml-cpu converts x into for F16 and BF16 weights, at every length (its vector loops and
// scalar tails convert NaNs differently), on every backend.
TEST(WeightFormatOracle, F16AndBF16ActivationsAreGgmlCpusBytesOnEveryBackend) {
  const GgmlOracle& oracle = GgmlOracle::load();
  const std::vector<float> floats = bit_patterns();
  for (const std::size_t n : row_lengths()) {
    for (std::size_t start = 0; start + n <= floats.size(); start += 997 * n) {
      const std::span<const float> x(floats.data() + start, n);
      std::vector<quant::fp16_t> ggml16(n);
      std::vector<quant::bf16_t> ggml_bf16(n);
      oracle.cpu_fp32_to_fp16(x, ggml16);
      oracle.cpu_fp32_to_bf16(x, ggml_bf16);
      for (const Backend backend : kConcreteBackends) {
        if (!is_supported(backend)) continue;
        std::vector<quant::fp16_t> ours16(n);
        std::vector<quant::bf16_t> ours_bf16(n);
        quant::fp32_to_fp16_activation(x, ours16, backend);
        quant::fp32_to_bf16_row(x, ours_bf16, backend);
        ASSERT_TRUE(same_halves<quant::fp16_t>(ours16, ggml16)) << "F16 " << name(backend) << " n " << n;
        ASSERT_TRUE(same_halves<quant::bf16_t>(ours_bf16, ggml_bf16)) << "BF16 " << name(backend) << " n " << n;
      }
    }
  }
}

TEST(WeightFormatOracle, F16AndBF16RowsDequantizeToGgmlsFloats) {
  const GgmlOracle& oracle = GgmlOracle::load();
  std::vector<std::uint16_t> halves(65536);
  for (std::size_t h = 0; h < halves.size(); ++h) halves[h] = static_cast<std::uint16_t>(h);
  const auto bytes = std::as_bytes(std::span<const std::uint16_t>(halves));
  std::vector<float> ours(halves.size()), ggml(halves.size());
  quant::dequantize(quant::TensorType::BF16, bytes, ours);
  oracle.ggml_bf16_to_fp32_row(halves.data(), ggml.data(), static_cast<std::int64_t>(halves.size()));
  int reported = 0;
  expect_same_floats("every bf16", ours, ggml, reported);
  quant::dequantize(quant::TensorType::F16, bytes, ours);
  oracle.ggml_fp16_to_fp32_row(halves.data(), ggml.data(), static_cast<std::int64_t>(halves.size()));
  for (std::size_t h = 0; h < halves.size(); ++h) {
    // ggml's portable conversion makes every NaN its own way; a NaN must stay a NaN.
    if (std::isnan(ours[h])) {
      ASSERT_TRUE(std::isnan(ggml[h])) << h;
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(ours[h]), std::bit_cast<std::uint32_t>(ggml[h])) << h;
    }
  }
}

// The tensor bytes `brick quantize` writes: quantize() of whole matrices, normal and adversarial,
// is what llama-quantize's ggml_quantize_chunk writes (no importance matrix), for every type.
TEST(WeightFormatOracle, QuantizeWritesGgmlQuantizeChunksBytesForEveryType) {
  const GgmlOracle& oracle = GgmlOracle::load();
  constexpr std::size_t kCols = 1024;
  std::vector<float> matrix = normal(16 * kCols, 99, 0.0f, 0.02f);
  for (const Pattern& pattern : adversarial_patterns(kCols, 7)) matrix.insert(matrix.end(), pattern.values.begin(), pattern.values.end());
  for (const Row& row : q8_0_rows()) {
    std::vector<float> wide(kCols);
    for (std::size_t i = 0; i < kCols; ++i) wide[i] = row.values[i % kQ80BlockSize];
    matrix.insert(matrix.end(), wide.begin(), wide.end());
  }
  int checked = 0;
  for (std::uint32_t id = 0; id < 64; ++id) {
    const auto traits = quant::tensor_type_traits(id);
    if (!traits || !quant::is_quantizable(traits->type)) continue;
    std::vector<std::byte> ours(*quant::row_bytes(traits->type, kCols) * (matrix.size() / kCols));
    quant::quantize(traits->type, matrix, kCols, ours);
    const std::vector<std::byte> ggml = oracle.quantize_chunk(static_cast<GgmlType>(id), matrix, kCols);
    ASSERT_EQ(ours.size(), ggml.size()) << traits->name;
    const std::size_t row_bytes = *quant::row_bytes(traits->type, kCols);
    for (std::size_t r = 0; r < matrix.size() / kCols; ++r) {
      EXPECT_EQ(std::memcmp(ours.data() + r * row_bytes, ggml.data() + r * row_bytes, row_bytes), 0)
          << traits->name << " row " << r;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

}  // namespace
}  // namespace brick::test
