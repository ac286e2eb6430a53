#include "brick/model/tokenizer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <queue>

#include "brick/core/error.hpp"

namespace brick::model {
namespace {

constexpr std::string_view kSpace = "\xe2\x96\x81";  // U+2581, SentencePiece's space

// Bytes in the UTF-8 sequence that `lead` starts (1 for a stray continuation byte, as llama.cpp).
std::size_t utf8_length(unsigned char lead) noexcept {
  static constexpr std::uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (char c : text) {
    if (c == ' ') out += kSpace;
    else out += c;
  }
  return out;
}

struct Symbol {
  int prev;
  int next;
  std::size_t offset;
  std::size_t length;  // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  std::size_t length;
  // The highest score first; among equal scores the leftmost pair.
  bool operator<(const Bigram& other) const noexcept {
    return score < other.score || (score == other.score && left > other.left);
  }
};

}  // namespace

std::vector<TokenId> Tokenizer::encode(std::string_view raw, bool add_bos) const {
  const Vocab& vocab = *vocab_;
  std::vector<TokenId> out;
  if (add_bos && vocab.special().add_bos) out.push_back(vocab.special().bos);
  if (raw.empty()) return out;
  std::string text = vocab.special().add_space_prefix ? " " : "";
  text += raw;
  text = escape_spaces(text);

  std::vector<Symbol> symbols;
  for (std::size_t offset = 0; offset < text.size();) {
    const std::size_t length =
        std::min(utf8_length(static_cast<unsigned char>(text[offset])), text.size() - offset);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, index + 1, offset, length});
    offset += length;
  }
  symbols.back().next = -1;

  std::priority_queue<Bigram> queue;
  const auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const std::string_view joined(text.data() + symbols[left].offset, symbols[left].length + symbols[right].length);
    if (const auto id = vocab.find(joined)) queue.push({left, right, vocab.score(*id), joined.size()});
  };
  for (std::size_t i = 1; i < symbols.size(); ++i) try_pair(static_cast<int>(i) - 1, static_cast<int>(i));

  while (!queue.empty()) {
    const Bigram bigram = queue.top();
    queue.pop();
    Symbol& left = symbols[bigram.left];
    Symbol& right = symbols[bigram.right];
    // Stale entries: one side has since been merged into something else.
    if (left.length == 0 || right.length == 0 || left.length + right.length != bigram.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = bigram.left;
    try_pair(left.prev, bigram.left);
    try_pair(bigram.left, left.next);
  }

  // Every merged piece is a token; a single character that is not falls back to its bytes.
  for (int i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece(text.data() + symbols[i].offset, symbols[i].length);
    if (const auto id = vocab.find(piece)) out.push_back(*id);
    else append_bytes(piece, out);
  }
  return out;
}

void Tokenizer::append_bytes(std::string_view text, std::vector<TokenId>& out) const {
  for (char c : text) {
    const auto byte = vocab_->byte_token(static_cast<std::uint8_t>(c));
    out.push_back(byte ? *byte : vocab_->special().unk);
  }
}

std::string Tokenizer::piece(TokenId id) const {
  if (!vocab_->contains(id)) {
    throw InvalidArgument(fmt::format("token id {} is outside the vocabulary of {} tokens", id, vocab_->size()));
  }
  const std::string& text = vocab_->piece(id);
  switch (vocab_->type(id)) {
    case TokenType::Byte:
      if (const auto byte = vocab_->byte_value(id)) return std::string(1, static_cast<char>(*byte));
      return text;
    case TokenType::Control:
    case TokenType::Unused:
      return {};
    case TokenType::Unknown:
      return "\xe2\x96\x85";  // llama.cpp shows the unknown token as U+2585
    case TokenType::UserDefined:
      return text;
    case TokenType::Undefined:
    case TokenType::Normal:
      break;
  }
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, kSpace.size(), kSpace) == 0) {
      out += ' ';
      i += kSpace.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::string Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string out;
  bool first = true;
  for (TokenId id : ids) {
    std::string text = piece(id);
    if (first && !text.empty()) {
      if (vocab_->special().add_space_prefix && text.front() == ' ') text.erase(0, 1);
      first = false;
    }
    out += text;
  }
  return out;
}

}  // namespace brick::model
