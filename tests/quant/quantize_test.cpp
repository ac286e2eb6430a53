// The generic quantize / dequantize: each type's own functions, byte for byte, and clear errors.
#include "brick/quant/quantize.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/tensor_type.hpp"
#include "support/random_data.hpp"

namespace brick::quant {
namespace {

TEST(Quantize, EachTypeWritesItsOwnQuantizersBytes) {
  const std::vector<float> values = test::normal(2 * 512, 5);
  std::vector<BlockQ6K> q6(4);
  quantize_q6k(values, q6);
  std::vector<std::byte> out(4 * sizeof(BlockQ6K));
  quantize(TensorType::Q6_K, values, 512, out);
  EXPECT_EQ(std::memcmp(out.data(), q6.data(), out.size()), 0);

  std::vector<fp16_t> half(values.size());
  fp32_to_fp16_row(values, half, Backend::Scalar);
  std::vector<std::byte> f16(values.size() * 2);
  quantize(TensorType::F16, values, 512, f16);
  EXPECT_EQ(std::memcmp(f16.data(), half.data(), f16.size()), 0);

  std::vector<float> back(values.size()), expected(values.size());
  dequantize(TensorType::Q6_K, out, back);
  dequantize_q6k(q6, expected);
  EXPECT_EQ(back, expected);
}

// Every type Brick computes with can be written, and reads back close to the values it was given.
TEST(Quantize, EveryComputableTypeRoundTrips) {
  const std::vector<float> values = test::normal(4 * 512, 6, 0.0f, 0.5f);
  int checked = 0;
  for (std::uint32_t id = 0; id < 64; ++id) {
    const auto traits = tensor_type_traits(id);
    if (!traits || !is_computable(traits->type)) continue;
    EXPECT_TRUE(is_quantizable(traits->type)) << traits->name;
    std::vector<std::byte> bytes(4 * *row_bytes(traits->type, 512));
    quantize(traits->type, values, 512, bytes);
    std::vector<float> back(values.size());
    dequantize(traits->type, bytes, back);
    double error = 0.0;
    double norm = 0.0;
    for (std::size_t i = 0; i < values.size(); ++i) {
      error += (double(back[i]) - values[i]) * (double(back[i]) - values[i]);
      norm += double(values[i]) * values[i];
    }
    EXPECT_LT(std::sqrt(error / norm), 0.08) << traits->name;
    ++checked;
  }
  EXPECT_EQ(checked, 7);
}

TEST(Quantize, RejectsWhatItCannotWrite) {
  const std::vector<float> values(512);
  std::vector<std::byte> out(2 * sizeof(BlockQ5K));
  EXPECT_NO_THROW(quantize(TensorType::Q5_K, values, 512, out));
  EXPECT_THROW(quantize(TensorType::Q5_K, values, 500, out), InvalidArgument);
  EXPECT_THROW(quantize(TensorType::Q5_K, values, 0, out), InvalidArgument);
  EXPECT_THROW(quantize(TensorType::Q5_K, values, 256, std::span(out).first(100)), InvalidArgument);
  EXPECT_THROW(quantize(TensorType::IQ2_XXS, values, 512, out), InvalidArgument);
  std::vector<float> back(511);
  EXPECT_THROW(dequantize(TensorType::Q5_K, out, back), InvalidArgument);
}

}  // namespace
}  // namespace brick::quant
