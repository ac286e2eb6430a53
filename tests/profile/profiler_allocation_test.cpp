// The hot path must never allocate: start/stop/record (and a Deferred layer) call none of the global
// allocation functions (counted by support/counting_allocator.cpp, linked into this binary).
#include <gtest/gtest.h>

#include <new>

#include "brick/profile/profiler.hpp"
#include "support/counting_allocator.hpp"

namespace brick {
namespace {

TEST(BrickProfilerAllocation, CountingAllocatorSeesAllocations) {
  const std::uint64_t before = test::allocations();
  // An explicit call: compilers may elide a new-expression's allocation, never a direct call.
  void* p = ::operator new(sizeof(int));
  ::operator delete(p);
  EXPECT_EQ(test::allocations(), before + 1);
}

TEST(BrickProfilerAllocation, HotPathAllocatesNothing) {
  for (const SyncMode mode : {SyncMode::Eager, SyncMode::Deferred}) {
    for (const std::size_t trace_capacity : {std::size_t{0}, std::size_t{64}}) {
      BrickProfiler profiler(ProfilerOptions{.sync_mode = mode, .trace_capacity_per_thread = trace_capacity});
      // The thread's first record creates its shard: that is the one allowed allocation.
      profiler.record(BrickId::RmsNorm, 1);
      const std::uint64_t before = test::allocations();
      for (int layer = 0; layer < 10; ++layer) {
        profiler.begin_layer(static_cast<std::uint32_t>(layer));
        for (const BrickId id : all_brick_ids()) {
          ProfileTimer timer = profiler.start(id);
          profiler.stop(timer, 1, 64, 128);
          profiler.record(id, 100, 1);
          { BRICK_PROFILE_SCOPE(profiler, id, 1); }
        }
        profiler.end_layer();
      }
      profiler.disable();
      ProfileTimer timer = profiler.start(BrickId::LmHead);
      profiler.stop(timer);
      profiler.enable();
      profiler.add_tokens(1);
      const std::uint64_t after = test::allocations();
      EXPECT_EQ(after, before) << name(mode) << " trace capacity " << trace_capacity;
      EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 31u);
    }
  }
}

}  // namespace
}  // namespace brick
