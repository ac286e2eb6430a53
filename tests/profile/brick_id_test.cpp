#include "brick/core/brick_id.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "brick/profile/profiler.hpp"

namespace brick {
namespace {

std::string upper(std::string_view text) {
  std::string out;
  for (const char c : text) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

TEST(BrickId, IsOneByteAndIndexesDenselyInDeclarationOrder) {
  static_assert(sizeof(BrickId) == 1);
  static_assert(index(BrickId::RmsNorm) == 0);
  const auto ids = all_brick_ids();
  ASSERT_EQ(ids.size(), kBrickIdCount);
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(index(ids[i]), i);
}

TEST(BrickId, EveryNameRoundTripsInAnyCase) {
  for (const BrickId id : all_brick_ids()) {
    const std::string_view brick_name = name(id);
    EXPECT_NE(brick_name, "Unknown");
    EXPECT_EQ(brick_id_from_name(brick_name), id) << brick_name;
    EXPECT_EQ(brick_id_from_name(upper(brick_name)), id) << brick_name;
  }
  EXPECT_EQ(name(BrickId::COUNT), "Unknown");
}

TEST(BrickId, AcceptsTheCommonAliases) {
  const std::pair<std::string_view, BrickId> aliases[] = {
      {"qkv", BrickId::QkvProjection},        {"rope", BrickId::RopeEmbedding},
      {"softmax", BrickId::AttentionSoftmax}, {"gate", BrickId::GateProjection},
      {"up", BrickId::UpProjection},          {"down", BrickId::DownProjection},
      {"silu", BrickId::Activation},          {"GELU", BrickId::Activation},
      {"head", BrickId::LmHead},              {"sample", BrickId::Sampling},
      {"rms_norm", BrickId::RmsNorm},         {"kv-cache", BrickId::KvCacheWrite},
  };
  for (const auto& [alias, id] : aliases) EXPECT_EQ(brick_id_from_name(alias), id) << alias;
}

TEST(BrickId, RejectsUnknownNames) {
  for (const std::string_view bad : {"", "rmsnorm2", "attention_scores_extra", "COUNT", "Unknown", "_"}) {
    EXPECT_FALSE(brick_id_from_name(bad).has_value()) << bad;
  }
}

TEST(BrickId, HasTheRequiredBricksInTheirCategories) {
  EXPECT_GE(kBrickIdCount, 18u);
  EXPECT_EQ(category(BrickId::RmsNorm), BrickCategory::Norm);
  EXPECT_EQ(category(BrickId::LayerNorm), BrickCategory::Norm);
  for (const BrickId id : {BrickId::QkvProjection, BrickId::RopeEmbedding, BrickId::AttentionScore,
                           BrickId::AttentionSoftmax, BrickId::AttentionOutput, BrickId::OutputProjection}) {
    EXPECT_EQ(category(id), BrickCategory::Attention) << name(id);
  }
  for (const BrickId id : {BrickId::GateProjection, BrickId::UpProjection, BrickId::GateUpProjection,
                           BrickId::Activation, BrickId::DownProjection}) {
    EXPECT_EQ(category(id), BrickCategory::Ffn) << name(id);
  }
  for (const BrickId id : {BrickId::Embedding, BrickId::LmHead, BrickId::Sampling, BrickId::QuantizeActivation}) {
    EXPECT_EQ(category(id), BrickCategory::Other) << name(id);
  }
}

// O(1) indexing as the profiler uses it: recording one id touches that id's slot and no other.
TEST(BrickId, EachIdOwnsExactlyOneProfilerSlot) {
  BrickProfiler profiler(ProfilerOptions{.clock = ClockSource::SteadyClock});
  for (const BrickId id : all_brick_ids()) profiler.record(id, 1000 + index(id), index(id) + 1);
  for (const BrickId id : all_brick_ids()) {
    const BrickStats stats = profiler.brick_stats(id);
    EXPECT_EQ(stats.count, 1u) << name(id);
    EXPECT_EQ(stats.total_ns, 1000 + index(id)) << name(id);
    EXPECT_EQ(stats.elements, index(id) + 1) << name(id);
  }
}

}  // namespace
}  // namespace brick
