#include "brick/core/brick_id.hpp"

#include <cctype>

namespace brick {
namespace {

struct BrickInfo {
  std::string_view name;
  BrickCategory category;
};

constexpr std::array<BrickInfo, kBrickIdCount> kInfo = {{
    {"RmsNorm", BrickCategory::Norm},
    {"LayerNorm", BrickCategory::Norm},
    {"QkvProjection", BrickCategory::Attention},
    {"RopeEmbedding", BrickCategory::Attention},
    {"AttentionScore", BrickCategory::Attention},
    {"AttentionSoftmax", BrickCategory::Attention},
    {"AttentionOutput", BrickCategory::Attention},
    {"OutputProjection", BrickCategory::Attention},
    {"GateProjection", BrickCategory::Ffn},
    {"UpProjection", BrickCategory::Ffn},
    {"GateUpProjection", BrickCategory::Ffn},
    {"Activation", BrickCategory::Ffn},
    {"DownProjection", BrickCategory::Ffn},
    {"Residual", BrickCategory::Other},
    {"Embedding", BrickCategory::Other},
    {"LmHead", BrickCategory::Other},
    {"Sampling", BrickCategory::Other},
    {"QuantizeActivation", BrickCategory::Other},
    {"KvCacheWrite", BrickCategory::Attention},
}};

struct Alias {
  std::string_view alias;
  BrickId id;
};

constexpr Alias kAliases[] = {
    {"rmsnorm", BrickId::RmsNorm},
    {"norm", BrickId::RmsNorm},
    {"layernorm", BrickId::LayerNorm},
    {"ln", BrickId::LayerNorm},
    {"qkv", BrickId::QkvProjection},
    {"qkvproj", BrickId::QkvProjection},
    {"rope", BrickId::RopeEmbedding},
    {"rotary", BrickId::RopeEmbedding},
    {"score", BrickId::AttentionScore},
    {"qk", BrickId::AttentionScore},
    {"softmax", BrickId::AttentionSoftmax},
    {"attnsoftmax", BrickId::AttentionSoftmax},
    {"attnout", BrickId::AttentionOutput},
    {"attention", BrickId::AttentionOutput},
    {"oproj", BrickId::OutputProjection},
    {"output", BrickId::OutputProjection},
    {"wo", BrickId::OutputProjection},
    {"gate", BrickId::GateProjection},
    {"up", BrickId::UpProjection},
    {"gateup", BrickId::GateUpProjection},
    {"silu", BrickId::Activation},
    {"gelu", BrickId::Activation},
    {"swiglu", BrickId::Activation},
    {"act", BrickId::Activation},
    {"down", BrickId::DownProjection},
    {"add", BrickId::Residual},
    {"residual", BrickId::Residual},
    {"embed", BrickId::Embedding},
    {"tokembd", BrickId::Embedding},
    {"head", BrickId::LmHead},
    {"lmhead", BrickId::LmHead},
    {"sample", BrickId::Sampling},
    {"sampler", BrickId::Sampling},
    {"quantize", BrickId::QuantizeActivation},
    {"q8k", BrickId::QuantizeActivation},
    {"kvcache", BrickId::KvCacheWrite},
    {"kvwrite", BrickId::KvCacheWrite},
};

bool is_separator(char c) {
  return c == '_' || c == '-' || c == ' ';
}

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Compares ignoring case and separators, without allocating.
bool same_name(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (true) {
    while (i < a.size() && is_separator(a[i])) ++i;
    while (j < b.size() && is_separator(b[j])) ++j;
    if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
    if (lower(a[i]) != lower(b[j])) return false;
    ++i;
    ++j;
  }
}

}  // namespace

std::array<BrickId, kBrickIdCount> all_brick_ids() noexcept {
  std::array<BrickId, kBrickIdCount> ids{};
  for (std::size_t i = 0; i < kBrickIdCount; ++i) ids[i] = static_cast<BrickId>(i);
  return ids;
}

std::string_view name(BrickId id) noexcept {
  const auto i = index(id);
  return i < kBrickIdCount ? kInfo[i].name : "Unknown";
}

std::string_view name(BrickCategory category) noexcept {
  switch (category) {
    case BrickCategory::Norm:
      return "Norm";
    case BrickCategory::Attention:
      return "Attention";
    case BrickCategory::Ffn:
      return "Ffn";
    case BrickCategory::Other:
    case BrickCategory::COUNT:
      break;
  }
  return "Other";
}

BrickCategory category(BrickId id) noexcept {
  const auto i = index(id);
  return i < kBrickIdCount ? kInfo[i].category : BrickCategory::Other;
}

std::optional<BrickId> brick_id_from_name(std::string_view text) noexcept {
  for (std::size_t i = 0; i < kBrickIdCount; ++i) {
    if (same_name(text, kInfo[i].name)) return static_cast<BrickId>(i);
  }
  for (const Alias& alias : kAliases) {
    if (same_name(text, alias.alias)) return alias.id;
  }
  return std::nullopt;
}

}  // namespace brick
