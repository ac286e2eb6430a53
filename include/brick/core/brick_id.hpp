#pragma once
// The well-known bricks of a transformer layer. A BrickId is one byte and indexes fixed arrays of
// statistics directly (the profiler's O(1) path); bricks without an id are named by string instead.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace brick {

enum class BrickId : std::uint8_t {
  RmsNorm,
  LayerNorm,
  QkvProjection,
  RopeEmbedding,
  AttentionScore,
  AttentionSoftmax,
  AttentionOutput,
  OutputProjection,
  GateProjection,
  UpProjection,
  GateUpProjection,  // fused gate and up projections with the activation
  Activation,
  DownProjection,
  Residual,
  Embedding,
  LmHead,
  Sampling,
  QuantizeActivation,
  KvCacheWrite,
  COUNT,
};

inline constexpr std::size_t kBrickIdCount = static_cast<std::size_t>(BrickId::COUNT);

enum class BrickCategory : std::uint8_t { Norm, Attention, Ffn, Other, COUNT };

inline constexpr std::size_t kBrickCategoryCount = static_cast<std::size_t>(BrickCategory::COUNT);

constexpr std::size_t index(BrickId id) noexcept {
  return static_cast<std::size_t>(id);
}

// Every id, in declaration order, for iteration.
std::array<BrickId, kBrickIdCount> all_brick_ids() noexcept;

// "RmsNorm", "QkvProjection", ...; "COUNT" is not a brick and yields "Unknown".
std::string_view name(BrickId id) noexcept;
std::string_view name(BrickCategory category) noexcept;

BrickCategory category(BrickId id) noexcept;

// Case-insensitive; accepts the canonical names and common aliases ("qkv", "rope", "softmax",
// "gate", "up", "down", "silu", "gelu", "swiglu", "head", "sample", "norm", ...). Underscores and
// hyphens are ignored, so "rms_norm" and "rms-norm" both name RmsNorm.
std::optional<BrickId> brick_id_from_name(std::string_view text) noexcept;

}  // namespace brick
