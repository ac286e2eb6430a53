// The tensor type table against ggml's own: every id ggml names has the same name, block size and
// block bytes here, and every id ggml has removed or never defined is unknown here too.
#include "brick/quant/tensor_type.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "brick/quant/kquants.hpp"
#include "support/ggml_oracle.hpp"

namespace brick::quant {
namespace {

TEST(TensorType, MatchesGgmlTypeTraitsForEveryId) {
  const test::GgmlOracle& oracle = test::GgmlOracle::load();
  void* base = dlopen(oracle.base_library_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(base, nullptr);
  const auto type_name = reinterpret_cast<const char* (*)(int)>(dlsym(base, "ggml_type_name"));
  const auto type_size = reinterpret_cast<std::size_t (*)(int)>(dlsym(base, "ggml_type_size"));
  const auto blck_size = reinterpret_cast<std::int64_t (*)(int)>(dlsym(base, "ggml_blck_size"));
  ASSERT_TRUE(type_name && type_size && blck_size);
  constexpr int kGgmlTypeCount = 43;  // GGML_TYPE_COUNT of ggml 0.23.0
  int known = 0;
  for (int id = 0; id < kGgmlTypeCount; ++id) {
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(id));
    if (blck_size(id) == 0) {
      EXPECT_FALSE(traits.has_value()) << "ggml id " << id << " is removed in ggml";
      continue;
    }
    ASSERT_TRUE(traits.has_value()) << "ggml id " << id << " (" << type_name(id) << ")";
    ++known;
    EXPECT_EQ(traits->name, std::string(type_name(id)));
    EXPECT_EQ(traits->block_values, static_cast<std::size_t>(blck_size(id))) << traits->name;
    EXPECT_EQ(traits->block_bytes, type_size(id)) << traits->name;
    EXPECT_EQ(static_cast<int>(traits->type), id);
  }
  EXPECT_EQ(known, 35);
  EXPECT_FALSE(tensor_type_traits(kGgmlTypeCount).has_value());
  EXPECT_FALSE(tensor_type_traits(std::numeric_limits<std::uint32_t>::max()).has_value());
}

TEST(TensorType, ParsesNamesInAnyCase) {
  EXPECT_EQ(parse_tensor_type("q4_K"), TensorType::Q4_K);
  EXPECT_EQ(parse_tensor_type("Q4_K"), TensorType::Q4_K);
  EXPECT_EQ(parse_tensor_type("bf16"), TensorType::BF16);
  EXPECT_FALSE(parse_tensor_type("q4_k_m").has_value());
  EXPECT_FALSE(parse_tensor_type("").has_value());
}

TEST(TensorType, RowBytesNeedWholeBlocksAndNoOverflow) {
  EXPECT_EQ(row_bytes(TensorType::Q5_K, 4096), 16 * sizeof(BlockQ5K));
  EXPECT_EQ(row_bytes(TensorType::Q8_0, 64), 68u);
  EXPECT_EQ(row_bytes(TensorType::F32, 3), 12u);
  EXPECT_FALSE(row_bytes(TensorType::Q4_K, 100).has_value());
  EXPECT_FALSE(row_bytes(TensorType::F64, std::numeric_limits<std::size_t>::max() / 4).has_value());
}

}  // namespace
}  // namespace brick::quant
