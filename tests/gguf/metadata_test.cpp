#include "brick/gguf/metadata.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "gguf/error_message.hpp"

namespace brick::gguf {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::string> keys(const Metadata& m) {
  std::vector<std::string> out;
  for (const auto& [key, value] : m.entries()) out.push_back(key);
  return out;
}

template <class F>
std::string format_error_of(F&& f) {
  return test::message_of<FormatError>(f);
}

TEST(Metadata, KeepsInsertionOrderAndReplacesInPlace) {
  Metadata m;
  m.set("c", 1u);
  m.set("a", 2u);
  m.set("b", 3u);
  m.set("a", "now a string");
  EXPECT_EQ(keys(m), (std::vector<std::string>{"c", "a", "b"}));
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(m.get<std::string>("a"), "now a string");
}

TEST(Metadata, EraseKeepsTheOrderAndTheLookupsOfTheOthers) {
  Metadata m;
  for (const char* key : {"k0", "k1", "k2", "k3"}) m.set(key, std::string(key));
  EXPECT_TRUE(m.erase("k1"));
  EXPECT_FALSE(m.erase("k1"));
  EXPECT_EQ(keys(m), (std::vector<std::string>{"k0", "k2", "k3"}));
  EXPECT_EQ(m.get<std::string>("k3"), "k3");
  EXPECT_EQ(m.get<std::string>("k2"), "k2");
  EXPECT_FALSE(m.contains("k1"));
  m.set("k1", std::string("back"));
  EXPECT_EQ(keys(m).back(), "k1");
}

TEST(Metadata, RejectsAnEmptyKey) {
  EXPECT_THROW(Metadata().set("", 1u), InvalidArgument);
}

TEST(Metadata, TypedLookups) {
  Metadata m;
  m.set("llama.block_count", 32u);
  m.set("llama.rope.freq_base", 10000.0f);
  m.set("tokenizer.ggml.tokens", Array{std::vector<std::string>{"<unk>", "<s>"}});
  m.set("general.flag", true);
  EXPECT_EQ(m.get<std::uint32_t>("llama.block_count"), 32u);
  ASSERT_NE(m.find<float>("llama.rope.freq_base"), nullptr);
  EXPECT_EQ(*m.find<float>("llama.rope.freq_base"), 10000.0f);
  EXPECT_EQ(m.find<float>("llama.missing"), nullptr);
  EXPECT_TRUE(m.get<Bool>("general.flag").value);
  const auto tokens = m.get_array<std::string>("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_TRUE(m.find_array<float>("tokenizer.ggml.scores").empty());
  EXPECT_NE(m.find_value("general.flag"), nullptr);
  EXPECT_EQ(m.find_value("general.nothing"), nullptr);
}

TEST(Metadata, WrongTypeNamesTheKeyTheTypeHeldAndTheTypeAskedFor) {
  Metadata m;
  m.set("llama.block_count", std::int32_t{32});
  m.set("tokenizer.ggml.scores", Array{std::vector<double>{0.5}});
  EXPECT_THAT(format_error_of([&] { m.get<std::uint32_t>("llama.block_count"); }),
              AllOf(HasSubstr("'llama.block_count'"), HasSubstr("i32"), HasSubstr("32"),
                    HasSubstr("not u32")));
  EXPECT_THAT(format_error_of([&] { m.find<std::string>("llama.block_count"); }),
              HasSubstr("not str"));
  EXPECT_THAT(format_error_of([&] { m.get_array<float>("tokenizer.ggml.scores"); }),
              AllOf(HasSubstr("'tokenizer.ggml.scores'"), HasSubstr("array of f64"),
                    HasSubstr("not of f32")));
  EXPECT_THAT(format_error_of([&] { m.get_array<float>("llama.block_count"); }),
              HasSubstr("not arr"));
}

TEST(Metadata, MissingKeyNamesTheKey) {
  const Metadata m;
  EXPECT_THAT(format_error_of([&] { m.get<std::uint32_t>("llama.context_length"); }),
              HasSubstr("'llama.context_length'"));
  EXPECT_THAT(format_error_of([&] { m.get_array<std::string>("tokenizer.ggml.tokens"); }),
              HasSubstr("'tokenizer.ggml.tokens'"));
}

TEST(Metadata, EqualityComparesKeysValuesAndOrder) {
  Metadata a, b;
  a.set("x", 1u);
  a.set("y", 2u);
  b.set("y", 2u);
  b.set("x", 1u);
  EXPECT_NE(a, b);
  Metadata c = a;
  EXPECT_EQ(a, c);
}

}  // namespace
}  // namespace brick::gguf
