// The hot path must never allocate: this file replaces the global allocation functions of the test
// binary with counting ones and checks that start/stop/record (and a Deferred layer) call none of them.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "brick/profile/profiler.hpp"

namespace {

std::atomic<std::uint64_t> allocations{0};

void* counted_allocate(std::size_t size, std::size_t alignment) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size == 0 ? 1 : size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocate(size, 0); }
void* operator new[](std::size_t size) { return counted_allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t al) { return counted_allocate(size, static_cast<std::size_t>(al)); }
void* operator new[](std::size_t size, std::align_val_t al) { return counted_allocate(size, static_cast<std::size_t>(al)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocate(size, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace brick {
namespace {

TEST(BrickProfilerAllocation, CountingAllocatorSeesAllocations) {
  const std::uint64_t before = allocations.load();
  // An explicit call: compilers may elide a new-expression's allocation, never a direct call.
  void* p = ::operator new(sizeof(int));
  ::operator delete(p);
  EXPECT_EQ(allocations.load(), before + 1);
}

TEST(BrickProfilerAllocation, HotPathAllocatesNothing) {
  for (const SyncMode mode : {SyncMode::Eager, SyncMode::Deferred}) {
    for (const std::size_t trace_capacity : {std::size_t{0}, std::size_t{64}}) {
      BrickProfiler profiler(ProfilerOptions{.sync_mode = mode, .trace_capacity_per_thread = trace_capacity});
      // The thread's first record creates its shard: that is the one allowed allocation.
      profiler.record(BrickId::RmsNorm, 1);
      const std::uint64_t before = allocations.load();
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
      const std::uint64_t after = allocations.load();
      EXPECT_EQ(after, before) << name(mode) << " trace capacity " << trace_capacity;
      EXPECT_EQ(profiler.brick_stats(BrickId::RmsNorm).count, 31u);
    }
  }
}

}  // namespace
}  // namespace brick
