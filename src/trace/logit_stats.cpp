#include "brick/trace/logit_stats.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>

#include "brick/core/error.hpp"

namespace brick::trace {
namespace {

void check_logits(std::span<const float> logits) {
  if (logits.empty()) throw InvalidArgument("logits: an empty span; expected one logit per vocabulary entry");
  if (logits.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw InvalidArgument(fmt::format("{} logits; at most 2^31 - 1", logits.size()));
  }
}

void check_token(std::span<const float> logits, std::int32_t token, std::string_view what) {
  if (token < 0 || static_cast<std::size_t>(token) >= logits.size()) {
    throw InvalidArgument(fmt::format("{} token {} outside a vocabulary of {}", what, token, logits.size()));
  }
}

// Whether token a (logit la) ranks ahead of token b (logit lb): larger logit first, NaN last,
// lower id first on ties.
bool ranks_ahead(float la, std::int32_t a, float lb, std::int32_t b) noexcept {
  const bool a_nan = la != la;
  const bool b_nan = lb != lb;
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && la != lb) return la > lb;
  return a < b;
}

std::uint32_t rank_unchecked(std::span<const float> logits, std::int32_t token) noexcept {
  // The tokens that rank ahead (ranks_ahead), counted branch-free: a larger logit (a NaN is never
  // larger), or the same logit at a lower id; behind a NaN token, every other token and the NaN ones
  // at lower ids.
  const float lt = logits[static_cast<std::size_t>(token)];
  const auto before = static_cast<std::size_t>(token);
  std::uint32_t ahead = 0;
  if (lt != lt) {
    for (std::size_t j = 0; j < logits.size(); ++j) {
      ahead += (logits[j] == logits[j] || j < before) ? 1u : 0u;
    }
    return ahead + 1;
  }
  for (std::size_t j = 0; j < logits.size(); ++j) {
    ahead += (logits[j] > lt || (logits[j] == lt && j < before)) ? 1u : 0u;
  }
  return ahead + 1;
}

}  // namespace

std::uint32_t rank_of(std::span<const float> logits, std::int32_t token) {
  check_logits(logits);
  check_token(logits, token, "ranked");
  return rank_unchecked(logits, token);
}

LogitStats compute_logit_stats(std::span<const float> logits, std::int32_t chosen, std::size_t top_k,
                               std::span<const std::int32_t> tracked) {
  check_logits(logits);
  check_token(logits, chosen, "chosen");
  if (top_k == 0 || top_k > kMaxLogitTopK) {
    throw InvalidArgument(fmt::format("logit top_k {}; expected 1 to {}", top_k, kMaxLogitTopK));
  }
  if (tracked.size() > kMaxTrackedTokens) {
    throw InvalidArgument(fmt::format("{} tracked tokens; at most {}", tracked.size(), kMaxTrackedTokens));
  }
  for (const std::int32_t token : tracked) check_token(logits, token, "tracked");

  LogitStats stats;
  stats.vocab = static_cast<std::uint32_t>(logits.size());
  float max_logit = -std::numeric_limits<float>::infinity();
  for (const float l : logits) {
    if (std::isfinite(l)) max_logit = std::max(max_logit, l);
    stats.invalid += l != l ? 1u : 0u;
  }
  const bool any_finite = std::isfinite(max_logit);
  const double m = any_finite ? max_logit : 0.0;
  // S = sum e^(l - m), T = sum e^(l - m) (l - m); entropy = log S - T / S, in double.
  // Four sums each, so that the additions do not wait on one another.
  std::array<double, 4> s_parts{}, t_parts{};
  for (std::size_t j = 0; j < logits.size(); ++j) {
    const float l = logits[j];
    if (!std::isfinite(l)) continue;
    const double shifted = static_cast<double>(l) - m;
    const double e = std::exp(shifted);
    s_parts[j % 4] += e;
    t_parts[j % 4] += e * shifted;
  }
  const double s = (s_parts[0] + s_parts[1]) + (s_parts[2] + s_parts[3]);
  const double t = (t_parts[0] + t_parts[1]) + (t_parts[2] + t_parts[3]);
  const std::size_t k = top_k;
  for (std::size_t j = 0; j < logits.size(); ++j) {
    const float l = logits[j];
    if (!std::isfinite(l)) continue;
    const auto token = static_cast<std::int32_t>(j);
    // Below the k-th, a logit cannot enter (ties are settled by ranks_ahead).
    if (stats.top_count == k && l < static_cast<float>(stats.top[k - 1].logit)) continue;
    if (stats.top_count == k && !ranks_ahead(l, token, static_cast<float>(stats.top[k - 1].logit), stats.top[k - 1].token)) {
      continue;
    }
    std::size_t slot = stats.top_count < k ? stats.top_count++ : k - 1;
    while (slot > 0 && ranks_ahead(l, token, static_cast<float>(stats.top[slot - 1].logit), stats.top[slot - 1].token)) {
      stats.top[slot] = stats.top[slot - 1];
      --slot;
    }
    stats.top[slot] = TokenLogit{token, l, 0.0, 0};
  }
  if (any_finite) stats.entropy = std::max(0.0, std::log(s) - t / s);
  const auto describe = [&](std::int32_t token, std::uint32_t rank) {
    const float l = logits[static_cast<std::size_t>(token)];
    if (!std::isfinite(l)) return TokenLogit{token, 0.0, 0.0, rank};
    return TokenLogit{token, l, std::exp(static_cast<double>(l) - m) / s, rank};
  };
  for (std::uint32_t i = 0; i < stats.top_count; ++i) stats.top[i] = describe(stats.top[i].token, i + 1);
  stats.chosen = describe(chosen, rank_unchecked(logits, chosen));
  for (const std::int32_t token : tracked) {
    stats.tracked[stats.tracked_count++] = describe(token, rank_unchecked(logits, token));
  }
  return stats;
}

std::optional<std::uint32_t> decisive_layer(std::span<const std::uint32_t> ranks, std::uint32_t vocab) noexcept {
  std::optional<std::uint32_t> decisive;
  std::int64_t best = 0;
  std::int64_t previous = vocab;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const std::int64_t improvement = previous - static_cast<std::int64_t>(ranks[i]);
    if (improvement > best) {
      best = improvement;
      decisive = static_cast<std::uint32_t>(i);
    }
    previous = ranks[i];
  }
  return decisive;
}

}  // namespace brick::trace
