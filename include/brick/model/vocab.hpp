#pragma once
// A SentencePiece-style vocabulary as a llama GGUF stores it (tokenizer.ggml.*): one piece, score
// and type per token id, and the ids of the special tokens. Pieces use U+2581 ("▁") for a space,
// and the 256 byte tokens "<0x00>".."<0xFF>" stand for raw bytes no piece covers.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace brick::model {

using TokenId = std::int32_t;

// llama.cpp's llama_token_type values, as stored in tokenizer.ggml.token_type.
enum class TokenType : std::int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

struct SpecialTokens {
  TokenId bos = 1;  // llama.cpp's SentencePiece defaults
  TokenId eos = 2;
  TokenId unk = 0;
  bool add_bos = true;           // tokenizer.ggml.add_bos_token
  bool add_space_prefix = true;  // tokenizer.ggml.add_space_prefix
};

class Vocab {
 public:
  // Copies the pieces. Throws FormatError when the vocabulary is empty, a piece repeats, scores or
  // types are shorter than the pieces (missing ones are 0 / Normal when the span is empty), a type
  // is outside llama.cpp's range, or a special id is outside the vocabulary.
  Vocab(std::span<const std::string_view> pieces, std::span<const float> scores,
        std::span<const std::int32_t> types, SpecialTokens special = {});
  // Movable, not copyable: the lookup table views the pieces' storage.
  Vocab(Vocab&&) noexcept = default;
  Vocab& operator=(Vocab&&) noexcept = default;
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

  std::size_t size() const noexcept { return pieces_.size(); }
  const std::string& piece(TokenId id) const { return pieces_.at(static_cast<std::size_t>(id)); }
  float score(TokenId id) const { return scores_.at(static_cast<std::size_t>(id)); }
  TokenType type(TokenId id) const { return types_.at(static_cast<std::size_t>(id)); }
  const SpecialTokens& special() const noexcept { return special_; }
  bool contains(TokenId id) const noexcept { return id >= 0 && static_cast<std::size_t>(id) < pieces_.size(); }

  // The id of a piece, if the vocabulary has it.
  std::optional<TokenId> find(std::string_view piece) const;
  // The byte token "<0xXX>" for `byte`, if the vocabulary has it.
  std::optional<TokenId> byte_token(std::uint8_t byte) const noexcept { return byte_tokens_[byte]; }
  // The byte a "<0xXX>" token stands for.
  std::optional<std::uint8_t> byte_value(TokenId id) const {
    const std::int16_t value = byte_values_.at(static_cast<std::size_t>(id));
    if (value < 0) return std::nullopt;
    return static_cast<std::uint8_t>(value);
  }

 private:
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  SpecialTokens special_;
  std::unordered_map<std::string_view, TokenId> ids_;  // views into pieces_
  std::vector<std::int16_t> byte_values_;  // -1 for tokens that are not "<0xXX>"
  std::optional<TokenId> byte_tokens_[256];
};

}  // namespace brick::model
