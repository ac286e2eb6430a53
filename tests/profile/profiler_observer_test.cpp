#include "brick/profile/profiler_observer.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/model/decoder_layer.hpp"

namespace brick {
namespace {

model::DecoderShape small_shape() {
  model::DecoderShape shape;
  shape.hidden = 64;
  shape.n_heads = 4;
  shape.n_kv_heads = 2;
  shape.ffn = 160;
  shape.context = 16;
  return shape;
}

TEST(ProfilerObserver, RecordsEveryBrickOfEveryLayerRunWithItsWork) {
  for (const SyncMode mode : {SyncMode::Eager, SyncMode::Deferred}) {
    const model::DecoderShape shape = small_shape();
    const model::SyntheticWeights weights(shape, 7);
    model::DecoderLayer layer(shape, weights.view(), model::DecoderOptions{});
    BrickProfiler profiler(ProfilerOptions{.sync_mode = mode, .trace_capacity_per_thread = 4096});
    ProfilerObserver observer(profiler);
    const std::vector<float> x(shape.hidden, 0.5f);

    std::map<BrickId, BrickStats> expected;  // counts, tokens, bytes and FLOPs from the reports
    std::map<BrickId, double> budgets;
    constexpr std::size_t kSteps = 3;
    for (std::size_t step = 0; step < kSteps; ++step) {
      const auto report = layer.step(x, step, &observer, step);
      ASSERT_TRUE(report.has_value());
      ASSERT_EQ(report->members.size(), layer.brick_count());
      for (const RunReport& member : report->members) {
        ASSERT_LT(index(member.id), kBrickIdCount) << member.brick;
        expected[member.id].add(0, member.metrics.tokens, static_cast<std::uint64_t>(member.metrics.bytes),
                                static_cast<std::uint64_t>(member.metrics.flops));
        budgets.emplace(member.id, member.metrics.budget_us_per_token);
      }
    }

    const LayerStats layers = profiler.layer_stats();
    EXPECT_EQ(layers.count, kSteps);
    EXPECT_LE(layers.attributed_ns, layers.wall_ns);
    std::uint64_t executions = 0;
    for (const auto& [id, want] : expected) {
      const BrickStats got = profiler.brick_stats(id);
      EXPECT_EQ(got.count, want.count) << name(id);
      EXPECT_EQ(got.elements, want.elements) << name(id);
      EXPECT_EQ(got.bytes, want.bytes) << name(id);
      EXPECT_EQ(got.flops, want.flops) << name(id);
      ASSERT_TRUE(profiler.budget(id).has_value()) << name(id);
      EXPECT_DOUBLE_EQ(profiler.budget(id)->us_per_token(), budgets[id]) << name(id);
      executions += got.count;
    }
    EXPECT_EQ(executions, kSteps * layer.brick_count());
    // One trace event per brick plus one per layer.
    EXPECT_EQ(profiler.trace_event_count(), executions + kSteps);
    EXPECT_NE(profiler.summary().find("budget us"), std::string::npos);
  }
}

TEST(ProfilerObserver, AnOpenLayerOnTheThreadIsAStateError) {
  BrickProfiler profiler;
  ProfilerObserver observer(profiler);
  profiler.begin_layer(0);
  EXPECT_THROW(observer.on_layer_begin(1), StateError);
  profiler.end_layer();
  EXPECT_THROW(observer.on_layer_end(), StateError);
}

TEST(ProfilerObserver, ABrickWithoutAnIdIsProfiledByNameAndAFailedBrickStillCounts) {
  BrickProfiler profiler;
  ProfilerObserver observer(profiler);
  observer.on_layer_begin(0);
  observer.on_brick_begin(BrickId::COUNT, "experimental_op");
  observer.on_brick_end(BrickId::COUNT, "experimental_op", nullptr);
  observer.on_layer_end();
  EXPECT_EQ(profiler.stats("experimental_op").count, 1u);
  EXPECT_EQ(profiler.misuse_count(ProfilerMisuse::InvalidBrickId), 0u);
}

}  // namespace
}  // namespace brick
