#pragma once
// AttentionStats: the distribution of one query's attention weights (one layer, head and query
// position) over the n positions it attends to, and three detectors of the ways attention goes
// wrong:
//   sink         the top weight is at position 0 and at least sink_threshold (attention parked on
//                the first token);
//   uniform      entropy >= uniform_ratio * log(n), with n >= 2 (attention spread evenly: the head
//                does not pick anything);
//   recency      at least recency_threshold of the mass on the last recency_window positions, with
//                n > recency_window (the head only looks back a few tokens).
//
// The weights are used as given (a softmax output sums to 1; nothing is renormalised). NaN and
// negative weights are counted in `invalid` and treated as 0. `top` holds the top_k largest weights
// that are >= min_weight, largest first (ties: lower position first); tail_mass is the total mass
// not in `top`. Entropy is -sum w log w in nats over the positive weights.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace brick::trace {

inline constexpr std::size_t kMaxAttentionTopK = 16;

struct AttentionOptions {
  std::size_t top_k = 4;           // 1..kMaxAttentionTopK
  double min_weight = 0.0;         // weights below it are never in `top`
  double sink_threshold = 0.5;     // in (0, 1]
  double uniform_ratio = 0.95;     // in (0, 1]
  std::size_t recency_window = 4;  // >= 1
  double recency_threshold = 0.9;  // in (0, 1]

  // InvalidArgument for a value outside the ranges above.
  void validate() const;
  bool operator==(const AttentionOptions&) const = default;
};

struct WeightedPosition {
  std::uint32_t position = 0;
  double weight = 0.0;
  bool operator==(const WeightedPosition&) const = default;
};

struct AttentionStats {
  std::uint32_t positions = 0;  // n
  std::array<WeightedPosition, kMaxAttentionTopK> top{};
  std::uint32_t top_count = 0;
  double total_mass = 0.0;
  double tail_mass = 0.0;
  double entropy = 0.0;
  double recent_mass = 0.0;  // on the last recency_window positions
  std::uint32_t invalid = 0;
  bool sink = false;
  bool uniform = false;
  bool recency = false;

  std::span<const WeightedPosition> top_positions() const noexcept { return std::span(top).first(top_count); }
  bool operator==(const AttentionStats&) const = default;
};

// InvalidArgument for an empty span or more than 2^32 - 1 positions; `options` must be valid.
AttentionStats compute_attention_stats(std::span<const float> weights, const AttentionOptions& options);

}  // namespace brick::trace
