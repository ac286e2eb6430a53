#include "brick/model/vocab.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick::model {
namespace {

// "<0xAB>" -> 0xAB (upper-case hex digits, the spelling llama.cpp looks up).
std::optional<std::uint8_t> parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (char c : piece.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9') value |= static_cast<unsigned>(c - '0');
    else if (c >= 'A' && c <= 'F') value |= static_cast<unsigned>(c - 'A' + 10);
    else return std::nullopt;
  }
  return static_cast<std::uint8_t>(value);
}

}  // namespace

Vocab::Vocab(std::span<const std::string_view> pieces, std::span<const float> scores,
             std::span<const std::int32_t> types, SpecialTokens special)
    : special_(special) {
  if (pieces.empty()) throw FormatError("vocabulary: no tokens (tokenizer.ggml.tokens is empty)");
  if (!scores.empty() && scores.size() < pieces.size()) {
    throw FormatError(fmt::format("vocabulary: {} tokens but only {} scores (tokenizer.ggml.scores)",
                                  pieces.size(), scores.size()));
  }
  if (!types.empty() && types.size() < pieces.size()) {
    throw FormatError(fmt::format("vocabulary: {} tokens but only {} token types (tokenizer.ggml.token_type)",
                                  pieces.size(), types.size()));
  }
  const std::size_t n = pieces.size();
  pieces_.assign(pieces.begin(), pieces.end());
  scores_.assign(n, 0.0f);
  types_.assign(n, TokenType::Normal);
  byte_values_.assign(n, -1);
  ids_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!scores.empty()) scores_[i] = scores[i];
    if (!types.empty()) {
      if (types[i] < 0 || types[i] > static_cast<std::int32_t>(TokenType::Byte)) {
        throw FormatError(fmt::format("vocabulary: token {} ('{}') has type {}; llama.cpp's types are 0..6", i,
                                      pieces_[i], types[i]));
      }
      types_[i] = static_cast<TokenType>(types[i]);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    if (!ids_.emplace(pieces_[i], id).second) {
      throw FormatError(fmt::format("vocabulary: token {} repeats the piece '{}' of token {}", i, pieces_[i],
                                    ids_.at(pieces_[i])));
    }
    if (const auto byte = parse_byte_piece(pieces_[i])) {
      byte_tokens_[*byte] = id;
      byte_values_[i] = *byte;
    }
  }
  for (const auto& [what, id] : {std::pair{"bos", special.bos}, std::pair{"eos", special.eos},
                                 std::pair{"unk", special.unk}}) {
    if (!contains(id)) {
      throw FormatError(fmt::format("vocabulary: the {} token id {} is outside the {} tokens", what, id, n));
    }
  }
}

std::optional<TokenId> Vocab::find(std::string_view piece) const {
  const auto it = ids_.find(piece);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace brick::model
