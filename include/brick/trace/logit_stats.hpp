#pragma once
// LogitStats: one decoding step's distribution over the vocabulary. The softmax is computed in
// double with the maximum subtracted; non-finite logits get probability 0 (a -inf logit is a mask,
// a NaN one is counted in `invalid`). `top` holds the top_k tokens by logit (ties: lower id first),
// entropy is in nats, and the chosen token's rank is 1 + the number of tokens with a larger logit
// (ties: lower id first), so the argmax has rank 1.
//
// The logit lens: rank_of() gives the chosen token's rank in an intermediate layer's logits (which
// the caller computes, e.g. the final norm and LM head applied to that layer's output), and
// decisive_layer() the layer where that rank improved most.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace brick::trace {

inline constexpr std::size_t kMaxLogitTopK = 16;
inline constexpr std::size_t kMaxTrackedTokens = 16;

struct TokenLogit {
  std::int32_t token = 0;
  double logit = 0.0;
  double probability = 0.0;
  std::uint32_t rank = 0;  // 1 = the largest logit
  bool operator==(const TokenLogit&) const = default;
};

struct LogitStats {
  std::uint32_t vocab = 0;
  std::array<TokenLogit, kMaxLogitTopK> top{};
  std::uint32_t top_count = 0;
  double entropy = 0.0;
  TokenLogit chosen;
  std::array<TokenLogit, kMaxTrackedTokens> tracked{};
  std::uint32_t tracked_count = 0;
  std::uint32_t invalid = 0;  // NaN logits

  std::span<const TokenLogit> top_tokens() const noexcept { return std::span(top).first(top_count); }
  std::span<const TokenLogit> tracked_tokens() const noexcept { return std::span(tracked).first(tracked_count); }
  bool operator==(const LogitStats&) const = default;
};

// InvalidArgument for empty logits, more than 2^31 - 1 of them, top_k outside 1..kMaxLogitTopK,
// more than kMaxTrackedTokens tracked ids, or a chosen or tracked id outside the vocabulary.
LogitStats compute_logit_stats(std::span<const float> logits, std::int32_t chosen, std::size_t top_k,
                               std::span<const std::int32_t> tracked = {});

// The chosen token's rank among `logits` (1 = largest; NaN logits rank last). InvalidArgument for
// empty logits or an id outside them.
std::uint32_t rank_of(std::span<const float> logits, std::int32_t token);

// Given the chosen token's rank after each layer (ranks[i]: layer i), the layer whose rank improved
// most over the layer before it (layer 0 is compared with the vocabulary size `vocab`, the worst
// rank); the earliest on ties. nullopt for no layers or when no layer improved the rank.
std::optional<std::uint32_t> decisive_layer(std::span<const std::uint32_t> ranks, std::uint32_t vocab) noexcept;

}  // namespace brick::trace
