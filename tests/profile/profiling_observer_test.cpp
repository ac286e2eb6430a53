#include "brick/profile/profiling_observer.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "brick/core/brick_layer.hpp"
#include "brick/core/error.hpp"
#include "core/scale_op.hpp"

namespace brick {
namespace {

using test::ScaleOp;

TEST(ProfilingObserver, RecordsEveryMemberWithItsWorkInsideAProfilerLayer) {
  for (const SyncMode mode : {SyncMode::Eager, SyncMode::Deferred}) {
    ScaleOp norm_op;
    norm_op.brick_id = BrickId::RmsNorm;
    ScaleOp add_op;
    add_op.brick_id = BrickId::Residual;
    ComputeBrick norm(norm_op, {Finite{}}, Backend::Scalar);
    ComputeBrick add(add_op, {Finite{}}, Backend::Scalar);
    const std::vector<float> x(100, 1.0f);
    std::vector<float> mid(100), out(100);
    const ScaleOp::Input in{x}, mid_in{mid};
    BrickLayer layer("l");
    layer.add(norm, in, mid).add(add, mid_in, out).add(add, mid_in, out);

    ProfilerOptions options;
    options.sync_mode = mode;
    BrickProfiler profiler(options);
    ProfilingObserver observer(profiler);
    for (std::size_t i = 0; i < 3; ++i) ASSERT_TRUE(layer.run(&observer, i).has_value());

    const BrickStats norm_stats = profiler.brick_stats(BrickId::RmsNorm);
    const BrickStats add_stats = profiler.brick_stats(BrickId::Residual);
    EXPECT_EQ(norm_stats.count, 3u) << name(mode);
    EXPECT_EQ(add_stats.count, 6u);
    EXPECT_EQ(add_stats.elements, 6u);  // ScaleOp: one token per call
    EXPECT_EQ(add_stats.bytes, 6u * 800u);
    EXPECT_EQ(add_stats.flops, 6u * 100u);
    EXPECT_EQ(profiler.layer_stats().count, 3u);
    EXPECT_GT(norm_stats.total_ns, 0u);
  }
}

TEST(ProfilingObserver, AFailingMemberIsStillTimedAndTheLayerClosed) {
  ComputeBrick failing(ScaleOp{}, {Bounds{0, 1}}, Backend::Scalar, {},
                       {CheckPolicy::Cheap, OnFailure::Error, false});
  const std::vector<float> x(8, 1.0f);
  std::vector<float> out(8);
  const ScaleOp::Input in{x};
  BrickLayer layer("l");
  layer.add(failing, in, out);
  BrickProfiler profiler;
  ProfilingObserver observer(profiler);
  EXPECT_FALSE(layer.run(&observer, 0).has_value());
  EXPECT_EQ(profiler.brick_stats(BrickId::Activation).count, 1u);
  EXPECT_EQ(profiler.layer_stats().count, 1u);
  profiler.begin_layer(1);  // would be a StateError if the failed run had left its layer open
  profiler.end_layer();
}

TEST(ProfilingObserver, AMemberWithoutAnIdIsProfiledByName) {
  BrickProfiler profiler;
  ProfilingObserver observer(profiler);
  observer.on_layer_begin(0);
  observer.on_brick_begin(BrickId::COUNT, "experimental_op");
  observer.on_brick_end(BrickId::COUNT, "experimental_op", nullptr);
  observer.on_layer_end();
  EXPECT_EQ(profiler.stats("experimental_op").count, 1u);
  EXPECT_EQ(profiler.misuse_count(ProfilerMisuse::InvalidBrickId), 0u);
}

TEST(ProfilingObserver, AnOpenProfilerLayerOnTheThreadIsAStateError) {
  BrickProfiler profiler;
  ProfilingObserver observer(profiler);
  profiler.begin_layer(0);
  EXPECT_THROW(observer.on_layer_begin(1), StateError);
  profiler.end_layer();
  EXPECT_THROW(observer.on_layer_end(), StateError);
}

}  // namespace
}  // namespace brick
