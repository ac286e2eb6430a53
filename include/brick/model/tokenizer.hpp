#pragma once
// llama.cpp's SentencePiece ("llama") tokenizer over a Vocab: the same ids as llama_tokenize for
// plain text, and the text of ids as llama_token_to_piece / llama_detokenize give it.
//
// Encoding: spaces become "▁" (and one is put in front when the vocabulary asks for a space
// prefix), the text is split into UTF-8 characters, and the adjacent pair whose joined piece has
// the highest score is merged, again and again (ties: the leftmost pair), until no joined piece is
// in the vocabulary. A piece left over that is not a token is emitted as its bytes' "<0xXX>"
// tokens (byte fallback), or as the unknown token when the vocabulary has no byte tokens.
// Special-token syntax in the text is not parsed: "<s>" is three characters.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brick/model/vocab.hpp"

namespace brick::model {

class Tokenizer {
 public:
  explicit Tokenizer(const Vocab& vocab) : vocab_(&vocab) {}

  // The ids of `text`, with the BOS id first when `add_bos` (and the vocabulary adds one).
  std::vector<TokenId> encode(std::string_view text, bool add_bos = true) const;

  // The text one token stands for: "▁" as a space, a byte token as its byte, control tokens as
  // nothing. Throws InvalidArgument for an id outside the vocabulary.
  std::string piece(TokenId id) const;

  // The text of a sequence; the space the tokenizer put in front of the first piece is dropped.
  std::string decode(std::span<const TokenId> ids) const;

 private:
  void append_bytes(std::string_view text, std::vector<TokenId>& out) const;

  const Vocab* vocab_;
};

}  // namespace brick::model
