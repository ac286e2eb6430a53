#include "brick/gguf/value.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace brick::gguf {
namespace {

TEST(Value, TypeIsTheGgufTypeId) {
  EXPECT_EQ(Value(std::uint8_t{1}).type(), ValueType::U8);
  EXPECT_EQ(Value(std::int8_t{1}).type(), ValueType::I8);
  EXPECT_EQ(Value(std::uint16_t{1}).type(), ValueType::U16);
  EXPECT_EQ(Value(std::int16_t{1}).type(), ValueType::I16);
  EXPECT_EQ(Value(1u).type(), ValueType::U32);
  EXPECT_EQ(Value(1).type(), ValueType::I32);
  EXPECT_EQ(Value(1.0f).type(), ValueType::F32);
  EXPECT_EQ(Value(true).type(), ValueType::Bool);
  EXPECT_EQ(Value("text").type(), ValueType::String);
  EXPECT_EQ(Value(Array{std::vector<float>{}}).type(), ValueType::Array);
  EXPECT_EQ(Value(std::uint64_t{1}).type(), ValueType::U64);
  EXPECT_EQ(Value(std::int64_t{1}).type(), ValueType::I64);
  EXPECT_EQ(Value(1.0).type(), ValueType::F64);
}

TEST(Value, NamesAreGgmlsSpelling) {
  const std::vector<std::string_view> expected = {"u8",   "i8",  "u16", "i16", "u32", "i32", "f32",
                                                  "bool", "str", "arr", "u64", "i64", "f64"};
  for (std::uint32_t id = 0; id < kValueTypeCount; ++id) {
    EXPECT_EQ(name(static_cast<ValueType>(id)), expected[id]) << id;
  }
  EXPECT_EQ(name(static_cast<ValueType>(kValueTypeCount)), "unknown");
}

TEST(Array, SizeAndElementTypeOfEveryKind) {
  EXPECT_EQ((Array{std::vector<std::string>{"a", "b", "c"}}.size()), 3u);
  EXPECT_EQ(Array{std::vector<std::string>{"a"}}.element_type(), ValueType::String);
  EXPECT_EQ(Array{std::vector<Bool>{}}.size(), 0u);
  EXPECT_EQ(Array{std::vector<Bool>{}}.element_type(), ValueType::Bool);
  const Array nested{
      std::vector<Array>{Array{std::vector<double>{1, 2}}, Array{std::vector<std::int8_t>{}}}};
  EXPECT_EQ(nested.size(), 2u);
  EXPECT_EQ(nested.element_type(), ValueType::Array);
}

TEST(Value, ToStringShowsScalarsAsWritten) {
  EXPECT_EQ(Value(std::uint8_t{200}).to_string(), "200");
  EXPECT_EQ(Value(std::int8_t{-5}).to_string(), "-5");
  EXPECT_EQ(Value(std::uint64_t{18446744073709551615u}).to_string(), "18446744073709551615");
  EXPECT_EQ(Value(0.5f).to_string(), "0.5");
  EXPECT_EQ(Value(1e-5).to_string(), "1e-05");
  EXPECT_EQ(Value(std::numeric_limits<float>::infinity()).to_string(), "inf");
  EXPECT_EQ(Value(true).to_string(), "true");
  EXPECT_EQ(Value(false).to_string(), "false");
}

TEST(Value, ToStringQuotesAndEscapesStrings) {
  EXPECT_EQ(Value("llama").to_string(), "\"llama\"");
  EXPECT_EQ(Value("").to_string(), "\"\"");
  EXPECT_EQ(Value("say \"hi\"\\\n\t").to_string(), "\"say \\\"hi\\\"\\\\\\n\\t\"");
  EXPECT_EQ(Value(std::string("a\0b\x7f", 4)).to_string(), "\"a\\x00b\\x7f\"");
  EXPECT_EQ(Value("\xe2\x96\x81the").to_string(), "\"\xe2\x96\x81the\"");  // UTF-8 as it is
}

TEST(Value, ToStringShowsArraysWithTypeLengthAndFirstElements) {
  EXPECT_EQ(Value(Array{std::vector<std::uint32_t>{1, 2, 3}}).to_string(), "u32[3]{1, 2, 3}");
  EXPECT_EQ(Value(Array{std::vector<std::string>{"a", "b", "c"}}).to_string(2),
            "str[3]{\"a\", \"b\", ...}");
  EXPECT_EQ(Value(Array{std::vector<float>{}}).to_string(), "f32[0]{}");
  EXPECT_EQ(Value(Array{std::vector<Bool>{{true}}}).to_string(0), "bool[1]{...}");
  const Array nested{
      std::vector<Array>{Array{std::vector<std::int16_t>{-1}}, Array{std::vector<Array>{}}}};
  EXPECT_EQ(Value(nested).to_string(), "arr[2]{i16[1]{-1}, arr[0]{}}");
}

TEST(Value, ComparesByTypeAndValue) {
  EXPECT_EQ(Value(1u), Value(1u));
  EXPECT_NE(Value(1u), Value(1));  // same number, other type
  EXPECT_NE(Value(Array{std::vector<std::uint8_t>{}}), Value(Array{std::vector<std::int8_t>{}}));
  EXPECT_EQ(Value(Array{std::vector<std::string>{"x"}}),
            Value(Array{std::vector<std::string>{"x"}}));
}

}  // namespace
}  // namespace brick::gguf
