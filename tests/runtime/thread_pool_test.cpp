#include "brick/runtime/batch/thread_pool.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <latch>
#include <stdexcept>
#include <thread>
#include <vector>

#include "brick/core/error.hpp"

namespace brick {
namespace {

using namespace std::chrono_literals;

TEST(ThreadPool, NeedsAtLeastTheCallingThread) {
  EXPECT_THROW(ThreadPool(0), InvalidArgument);
  EXPECT_EQ(ThreadPool(1).size(), 1u);
  EXPECT_EQ(ThreadPool(3).size(), 3u);
}

// ThreadPool(SIZE_MAX) used to end in std::bad_array_new_length.
TEST(ThreadPool, AThreadCountPastTheLimitIsAnInvalidArgument) {
  EXPECT_THROW(ThreadPool(SIZE_MAX), InvalidArgument);
  EXPECT_THROW(ThreadPool(ThreadPool::kMaxThreads + 1), InvalidArgument);
}

TEST(ThreadPool, CoversEveryIndexExactlyOnceWithBalance211Ranges) {
  for (std::size_t threads : {1u, 2u, 3u, 5u}) {
    for (std::chrono::nanoseconds spin : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(100us)}) {
      ThreadPool pool(threads, spin);
      for (std::size_t n : {0u, 1u, 2u, 3u, 4u, 7u, 100u, 1001u}) {
        std::vector<std::atomic<int>> hits(n);
        std::vector<std::atomic<int>> calls(threads);
        std::vector<Range> ranges(threads);
        pool.parallel_for(n, [&](Range range, std::size_t slot) {
          ASSERT_LT(slot, threads);
          calls[slot].fetch_add(1);
          ranges[slot] = range;
          for (std::size_t i = range.begin; i < range.end; ++i) hits[i].fetch_add(1);
        });
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
        for (std::size_t slot = 0; slot < threads; ++slot) {
          const Range expected = balance211(n, threads, slot);
          EXPECT_EQ(calls[slot].load(), expected.empty() ? 0 : 1) << "n=" << n << " slot=" << slot;
          if (!expected.empty()) {
            EXPECT_EQ(ranges[slot], expected);
          }
        }
      }
    }
  }
}

TEST(ThreadPool, ManyRapidCallsEachSeeTheirOwnWork) {
  // More slots than CPUs and short spins: workers are preempted between noticing a call and
  // claiming their piece, and wake late for calls the caller has already finished.
  for (std::chrono::nanoseconds spin : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(1us),
                                        std::chrono::nanoseconds(100us)}) {
    ThreadPool pool(4, spin);
    std::vector<std::uint64_t> per_slot(pool.size());
    std::uint64_t expected = 0;
    for (std::size_t call = 0; call < 20000; ++call) {
      const std::size_t n = call % 17;
      std::atomic<std::size_t> covered{0};
      pool.parallel_for(n, [&](Range range, std::size_t slot) {
        for (std::size_t i = range.begin; i < range.end; ++i) per_slot[slot] += call * 1000 + i;
        covered.fetch_add(range.size());
      });
      ASSERT_EQ(covered.load(), n) << "call " << call;
      for (std::size_t i = 0; i < n; ++i) expected += call * 1000 + i;
    }
    std::uint64_t total = 0;
    for (std::uint64_t v : per_slot) total += v;
    EXPECT_EQ(total, expected);
  }
}

// Small callables are copied into the pool's call line, others are called where they are; both
// must see their own captures on every slot, and a callable that is not trivially copyable is
// never copied.
TEST(ThreadPool, CallablesOfEveryShapeSeeTheirCapturesOnEverySlot) {
  ThreadPool pool(3);
  for (int call = 0; call < 200; ++call) {
    std::vector<std::atomic<int>> hits(50);
    const int weight = call + 1;
    pool.parallel_for(hits.size(), [&hits, weight](Range range, std::size_t) {
      for (std::size_t i = range.begin; i < range.end; ++i) hits[i].fetch_add(weight);
    });
    std::array<int, 40> table{};  // 160 bytes captured by value: too large to copy into the line
    table.fill(call);
    pool.parallel_for(hits.size(), [&hits, table](Range range, std::size_t) {
      for (std::size_t i = range.begin; i < range.end; ++i) hits[i].fetch_add(table[i % table.size()]);
    });
    for (const std::atomic<int>& hit : hits) ASSERT_EQ(hit.load(), weight + call) << "call " << call;
  }

  struct Counting {
    std::atomic<int>* copies;
    std::atomic<std::size_t>* covered;
    Counting(std::atomic<int>* c, std::atomic<std::size_t>* v) : copies(c), covered(v) {}
    Counting(const Counting& other) : copies(other.copies), covered(other.covered) { copies->fetch_add(1); }
    void operator()(Range range, std::size_t) const { covered->fetch_add(range.size()); }
  };
  std::atomic<int> copies{0};
  std::atomic<std::size_t> covered{0};
  const Counting counting(&copies, &covered);
  pool.parallel_for(100, counting);
  EXPECT_EQ(covered.load(), 100u);
  EXPECT_EQ(copies.load(), 0);

  struct Mutating {  // not callable as const: called in place, never through a copy
    std::atomic<std::size_t>* covered;
    void operator()(Range range, std::size_t) { covered->fetch_add(range.size()); }
  };
  covered = 0;
  pool.parallel_for(100, Mutating{&covered});
  EXPECT_EQ(covered.load(), 100u);
}

TEST(ThreadPool, NestedCallFromATaskThrowsStateErrorAndThePoolStaysUsable) {
  ThreadPool pool(2);
  std::atomic<int> nested_errors{0};
  pool.parallel_for(2, [&](Range, std::size_t) {
    try {
      pool.parallel_for(4, [](Range, std::size_t) { FAIL() << "a nested call must not run"; });
    } catch (const StateError&) {
      nested_errors.fetch_add(1);
    }
  });
  EXPECT_EQ(nested_errors.load(), 2);
  // Not caught inside the task: it reaches the outer caller.
  EXPECT_THROW(pool.parallel_for(1, [&](Range, std::size_t) { pool.parallel_for(1, [](Range, std::size_t) {}); }),
               StateError);
  std::atomic<std::size_t> covered{0};
  pool.parallel_for(10, [&](Range range, std::size_t) { covered.fetch_add(range.size()); });
  EXPECT_EQ(covered.load(), 10u);
}

TEST(ThreadPool, ConcurrentCallFromAnotherThreadThrowsStateError) {
  ThreadPool pool(2);
  std::latch task_started(1);
  std::promise<bool> other_thread_rejected;
  auto rejected = other_thread_rejected.get_future();
  std::thread other([&] {
    task_started.wait();
    try {
      pool.parallel_for(1, [](Range, std::size_t) {});
      other_thread_rejected.set_value(false);
    } catch (const StateError&) {
      other_thread_rejected.set_value(true);
    }
  });
  bool outcome = false;
  pool.parallel_for(1, [&](Range, std::size_t) {
    task_started.count_down();
    outcome = rejected.get();
  });
  other.join();
  EXPECT_TRUE(outcome);
}

TEST(ThreadPool, AnExceptionInATaskIsRethrownAfterEveryPieceHasRun) {
  for (std::chrono::nanoseconds spin : {std::chrono::nanoseconds(0), std::chrono::nanoseconds(100us)}) {
    ThreadPool pool(3, spin);
    for (std::size_t thrower = 0; thrower < 3; ++thrower) {
      std::vector<std::atomic<int>> hits(30);
      EXPECT_THROW(pool.parallel_for(30,
                                     [&](Range range, std::size_t slot) {
                                       for (std::size_t i = range.begin; i < range.end; ++i) hits[i].fetch_add(1);
                                       if (slot == thrower) throw std::runtime_error("task failed");
                                     }),
                   std::runtime_error);
      for (auto& hit : hits) EXPECT_EQ(hit.load(), 1);
    }
    EXPECT_THROW(pool.parallel_for(3, [](Range, std::size_t) { throw std::logic_error("every piece"); }),
                 std::logic_error);
    std::atomic<std::size_t> covered{0};
    pool.parallel_for(5, [&](Range range, std::size_t) { covered.fetch_add(range.size()); });
    EXPECT_EQ(covered.load(), 5u);
  }
}

TEST(ThreadPool, CallsAfterTheWorkersHaveBlockedStillCoverEverything) {
  // The pause lets idle workers pass their spin and block on the futex, so each call exercises the
  // wake-up path, or the caller running a sleeping worker's piece itself; either way all is covered.
  ThreadPool pool(3, 1us);
  for (int call = 0; call < 20; ++call) {
    std::this_thread::sleep_for(1ms);
    std::vector<std::atomic<int>> hits(9);
    pool.parallel_for(9, [&](Range range, std::size_t) {
      for (std::size_t i = range.begin; i < range.end; ++i) hits[i].fetch_add(1);
    });
    for (auto& hit : hits) ASSERT_EQ(hit.load(), 1);
  }
}

}  // namespace
}  // namespace brick
