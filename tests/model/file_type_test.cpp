// llama.cpp's per-tensor types for each file type: Q6_K output, the use_more_bits pattern of
// attn_v and ffn_down in the _M mixes, norms kept F32.
#include "brick/model/file_type.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <set>

namespace brick::model {
namespace {

using quant::TensorType;

TEST(FileType, NamesRoundTripAndIdsAreLlamaCpps) {
  for (FileType type : {FileType::F32, FileType::F16, FileType::Q8_0, FileType::Q4_K_M, FileType::Q5_K_M,
                        FileType::Q6_K, FileType::BF16}) {
    EXPECT_EQ(parse_file_type(name(type)), type);
    EXPECT_EQ(file_type_from_id(static_cast<std::uint32_t>(type)), type);
  }
  EXPECT_EQ(parse_file_type("Q4_K_M"), FileType::Q4_K_M);
  EXPECT_FALSE(parse_file_type("q4_k").has_value());
  EXPECT_EQ(static_cast<int>(FileType::Q4_K_M), 15);
  EXPECT_EQ(static_cast<int>(FileType::Q5_K_M), 17);
  EXPECT_FALSE(file_type_from_id(2).has_value());
}

TEST(FileType, MixesGiveQ6KToOutputAndToAttnVAndFfnDownWhereLlamaCppDoes) {
  constexpr std::size_t kLayers = 32;
  // use_more_bits(i, 32): i < 4, i >= 28, or (i - 4) % 3 == 2.
  const std::set<std::size_t> more = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  for (FileType mix : {FileType::Q4_K_M, FileType::Q5_K_M}) {
    const TensorType base = mix == FileType::Q4_K_M ? TensorType::Q4_K : TensorType::Q5_K;
    EXPECT_EQ(llama_tensor_type(mix, "output.weight", 2, kLayers, true), TensorType::Q6_K);
    EXPECT_EQ(llama_tensor_type(mix, "token_embd.weight", 2, kLayers, true), base);
    EXPECT_EQ(llama_tensor_type(mix, "token_embd.weight", 2, kLayers, false), TensorType::Q6_K);
    for (std::size_t i = 0; i < kLayers; ++i) {
      const TensorType expected = more.count(i) ? TensorType::Q6_K : base;
      EXPECT_EQ(llama_tensor_type(mix, fmt::format("blk.{}.attn_v.weight", i), 2, kLayers, true), expected) << i;
      EXPECT_EQ(llama_tensor_type(mix, fmt::format("blk.{}.ffn_down.weight", i), 2, kLayers, true), expected) << i;
      EXPECT_EQ(llama_tensor_type(mix, fmt::format("blk.{}.attn_k.weight", i), 2, kLayers, true), base);
      EXPECT_EQ(llama_tensor_type(mix, fmt::format("blk.{}.attn_norm.weight", i), 1, kLayers, true), TensorType::F32);
    }
  }
  EXPECT_EQ(llama_tensor_type(FileType::Q8_0, "output.weight", 2, kLayers, true), TensorType::Q8_0);
  EXPECT_EQ(llama_tensor_type(FileType::Q6_K, "blk.5.attn_q.weight", 2, kLayers, true), TensorType::Q6_K);
  EXPECT_EQ(llama_tensor_type(FileType::F16, "output.weight", 2, kLayers, true), TensorType::F16);
  EXPECT_EQ(llama_tensor_type(FileType::BF16, "blk.0.ffn_down.weight", 2, kLayers, true), TensorType::BF16);
}

}  // namespace
}  // namespace brick::model
