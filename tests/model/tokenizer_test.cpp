// The SentencePiece tokenizer on a small hand-made vocabulary: merges by score, ties to the left,
// byte fallback, the space prefix, and decode as the inverse of encode.
#include "brick/model/tokenizer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "brick/core/error.hpp"

namespace brick::model {
namespace {

// <unk> <s> </s>, the 256 byte tokens, then pieces with scores (higher merges first).
struct SmallVocab {
  std::vector<std::string> storage;
  std::vector<std::string_view> pieces;
  std::vector<float> scores;
  std::vector<std::int32_t> types;

  explicit SmallVocab(std::vector<std::pair<std::string, float>> extra) {
    add("<unk>", 0, TokenType::Unknown);
    add("<s>", 0, TokenType::Control);
    add("</s>", 0, TokenType::Control);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      add(name, 0, TokenType::Byte);
    }
    for (auto& [piece, score] : extra) add(piece, score, TokenType::Normal);
    for (const std::string& s : storage) pieces.emplace_back(s);
  }
  void add(std::string piece, float score, TokenType type) {
    storage.push_back(std::move(piece));
    scores.push_back(score);
    types.push_back(static_cast<std::int32_t>(type));
  }
  Vocab vocab(SpecialTokens special = {}) const { return Vocab(pieces, scores, types, special); }
};

constexpr TokenId kFirstPiece = 259;

TEST(Tokenizer, MergesTheHighestScoringPairFirst) {
  // "▁", "a", "b", "ab", "▁a", "▁ab": "ab" (-1) beats "▁a" (-2), then "▁ab" (-0.5) joins them.
  const SmallVocab small({{"\xe2\x96\x81", -5}, {"a", -5}, {"b", -5}, {"ab", -1}, {"\xe2\x96\x81" "a", -2},
                          {"\xe2\x96\x81" "ab", -0.5}});
  const Vocab vocab = small.vocab();
  const Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("ab"), (std::vector<TokenId>{1, kFirstPiece + 5}));
  EXPECT_EQ(tokenizer.encode("ab", false), (std::vector<TokenId>{kFirstPiece + 5}));
  // "ba": no "ba" piece, "▁b" absent: three single pieces.
  EXPECT_EQ(tokenizer.encode("ba", false), (std::vector<TokenId>{kFirstPiece, kFirstPiece + 2, kFirstPiece + 1}));
}

TEST(Tokenizer, EqualScoresMergeLeftmostFirst) {
  // "aaa": "aa" at 0-1 and at 1-2 score the same; the left one wins, leaving "aa" + "a".
  const SmallVocab small({{"a", -5}, {"aa", -1}, {"\xe2\x96\x81", -5}});
  SpecialTokens special;
  special.add_space_prefix = false;
  const Vocab vocab = small.vocab(special);
  const Tokenizer tokenizer(vocab);
  EXPECT_EQ(tokenizer.encode("aaa", false), (std::vector<TokenId>{kFirstPiece + 1, kFirstPiece}));
}

TEST(Tokenizer, FallsBackToByteTokensForUnknownCharacters) {
  const SmallVocab small({{"\xe2\x96\x81", -5}, {"a", -5}});
  const Vocab vocab = small.vocab();
  const Tokenizer tokenizer(vocab);
  // "é" is two bytes, C3 A9, neither a piece: two byte tokens (3 + byte value).
  EXPECT_EQ(tokenizer.encode("a\xc3\xa9", false),
            (std::vector<TokenId>{kFirstPiece, kFirstPiece + 1, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tokenizer.decode(tokenizer.encode("a\xc3\xa9 a")), "a\xc3\xa9 a");
}

TEST(Tokenizer, DecodeIsTheInverseOfEncode) {
  const SmallVocab small({{"\xe2\x96\x81", -5}, {"h", -5}, {"e", -5}, {"l", -5}, {"o", -5}, {"ll", -1},
                          {"\xe2\x96\x81" "h", -2}, {"lo", -3}});
  const Vocab vocab = small.vocab();
  const Tokenizer tokenizer(vocab);
  for (const std::string text : {"hello", "hello  hello", " leading", "trailing ", "x\xf0\x9f\x99\x82y", ""}) {
    EXPECT_EQ(tokenizer.decode(tokenizer.encode(text)), text) << text;
  }
  EXPECT_EQ(tokenizer.encode(""), (std::vector<TokenId>{1}));
  EXPECT_EQ(tokenizer.piece(1), "");  // control tokens print nothing
  EXPECT_THROW((void)tokenizer.piece(100000), InvalidArgument);
}

TEST(Vocab, RejectsWhatLlamaCppCannotLoad) {
  const std::vector<std::string_view> dup = {"a", "b", "a"};
  EXPECT_THROW(Vocab(dup, {}, {}), FormatError);
  const std::vector<std::string_view> none;
  EXPECT_THROW(Vocab(none, {}, {}), FormatError);
  const std::vector<std::string_view> three = {"<unk>", "<s>", "</s>"};
  const std::vector<float> short_scores = {0.0f};
  EXPECT_THROW(Vocab(three, short_scores, {}), FormatError);
  const std::vector<std::int32_t> bad_type = {1, 1, 9};
  EXPECT_THROW(Vocab(three, {}, bad_type), FormatError);
  SpecialTokens special;
  special.eos = 3;
  EXPECT_THROW(Vocab(three, {}, {}, special), FormatError);
  EXPECT_NO_THROW(Vocab(three, {}, {}));
}

}  // namespace
}  // namespace brick::model
