#include "brick/runtime/buffer/spsc_ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "brick/core/error.hpp"

namespace brick {
namespace {

TEST(SpscRing, HoldsUpToItsCapacityInOrder) {
  SpscRing<int> ring({.low = 2, .high = 6, .capacity = 8});
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(ring.try_push(i));
  EXPECT_FALSE(ring.try_push(99));
  EXPECT_EQ(ring.size_approx(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ring.try_pop(), std::optional<int>(i));
  EXPECT_EQ(ring.try_pop(), std::nullopt);
}

TEST(SpscRing, BatchesWrapAroundTheEnd) {
  SpscRing<std::uint32_t> ring({.low = 1, .high = 4, .capacity = 4});
  std::vector<std::uint32_t> in(10);
  std::iota(in.begin(), in.end(), 100u);
  std::vector<std::uint32_t> out;
  std::size_t pushed = 0;
  while (out.size() < in.size()) {
    pushed += ring.push(std::span<const std::uint32_t>(in).subspan(pushed, std::min<std::size_t>(3, in.size() - pushed)));
    std::uint32_t chunk[3];
    const std::size_t n = ring.pop(std::span<std::uint32_t>(chunk, 2));
    out.insert(out.end(), chunk, chunk + n);
  }
  EXPECT_EQ(out, in);
  // A push larger than the free space takes only the prefix that fits.
  EXPECT_EQ(ring.push(in), 4u);
  EXPECT_EQ(ring.push(in), 0u);
}

TEST(SpscRing, SignalsWatermarksWithHysteresis) {
  std::vector<bool> changes;
  SpscRing<int> ring({.low = 2, .high = 6, .capacity = 8},
                     [&](bool writable) { changes.push_back(writable); });
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ring.try_push(i));
  EXPECT_TRUE(ring.writable());
  ASSERT_TRUE(ring.try_push(5));  // 6 items: reached high
  EXPECT_FALSE(ring.writable());
  int sink = 0;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ring.try_pop(sink));  // 2 left: not below low
  EXPECT_FALSE(ring.writable());
  ASSERT_TRUE(ring.try_pop(sink));  // 1 left
  EXPECT_TRUE(ring.writable());
  EXPECT_EQ(changes, (std::vector<bool>{false, true}));
}

TEST(SpscRing, RejectsBadConfiguration) {
  EXPECT_THROW(SpscRing<int>({.low = 1, .high = 4, .capacity = 6}), InvalidArgument);
  EXPECT_THROW(SpscRing<int>({.low = 1, .high = 4, .capacity = 0}), InvalidArgument);
  EXPECT_THROW(SpscRing<int>({.low = 4, .high = 4, .capacity = 8}), InvalidArgument);
  EXPECT_THROW(SpscRing<int>({.low = 1, .high = 9, .capacity = 8}), InvalidArgument);
  EXPECT_NO_THROW(SpscRing<int>({.low = 1, .high = 1 << 10, .capacity = 1 << 10}));
}

// Capacities no machine can hold used to end in std::length_error or std::bad_alloc.
TEST(SpscRing, ACapacityPastMemoryIsACapacityErrorNamingTheSize) {
  const auto expect_capacity_error = [](std::size_t capacity) {
    try {
      SpscRing<int> ring({.low = 1, .high = 2, .capacity = capacity});
      ADD_FAILURE() << "a ring of " << capacity << " slots was built";
    } catch (const CapacityError& e) {
      EXPECT_NE(std::string(e.what()).find("SpscRing"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(capacity)), std::string::npos) << e.what();
    }
  };
  expect_capacity_error(std::size_t{1} << 63);  // slots x 4 bytes overflows
  expect_capacity_error(std::size_t{1} << 50);  // 4 PiB
}

// The producer honours the watermarks, so the ring never holds more than `high` and a push never
// fails; the consumer checks every token arrives once, in order.
TEST(SpscRingConcurrency, StreamsEveryTokenInOrderBetweenTwoThreads) {
  constexpr std::uint32_t kTokens = 300'000;
  int flips = 0;
  bool last_flip_writable = true;
  bool flips_alternate = true;
  SpscRing<std::uint32_t> ring({.low = 64, .high = 192, .capacity = 256}, [&](bool writable) {
    flips_alternate &= writable != last_flip_writable;
    last_flip_writable = writable;
    ++flips;
  });

  std::vector<std::uint32_t> received;
  received.reserve(kTokens);
  std::thread consumer([&] {
    std::uint32_t batch[32];
    bool single = false;
    while (received.size() < kTokens) {
      if (single) {
        std::uint32_t token = 0;
        if (ring.try_pop(token)) received.push_back(token);
      } else {
        const std::size_t n = ring.pop(batch);
        received.insert(received.end(), batch, batch + n);
      }
      single = !single;
      std::this_thread::yield();
    }
  });

  std::size_t refused_pushes = 0;
  for (std::uint32_t token = 0; token < kTokens;) {
    if (!ring.writable()) {
      std::this_thread::yield();
      continue;
    }
    if (ring.try_push(token)) {
      ++token;
    } else {
      ++refused_pushes;
    }
  }
  consumer.join();

  EXPECT_EQ(refused_pushes, 0u) << "a producer that honours `high` never finds the ring full";
  ASSERT_EQ(received.size(), kTokens);
  for (std::uint32_t i = 0; i < kTokens; ++i) ASSERT_EQ(received[i], i);
  EXPECT_TRUE(flips_alternate);
  EXPECT_EQ(ring.try_pop(), std::nullopt);
  RecordProperty("writability_flips", flips);
}

TEST(SpscRingConcurrency, MovesMoveOnlyValues) {
  constexpr int kItems = 20'000;
  SpscRing<std::unique_ptr<int>> ring({.low = 4, .high = 12, .capacity = 16});
  long long sum = 0;
  std::thread consumer([&] {
    for (int received = 0; received < kItems;) {
      std::unique_ptr<int> item;
      if (ring.try_pop(item)) {
        ASSERT_NE(item, nullptr);
        ASSERT_EQ(*item, received);
        sum += *item;
        ++received;
      } else {
        std::this_thread::yield();
      }
    }
  });
  for (int i = 0; i < kItems;) {
    auto item = std::make_unique<int>(i);
    if (ring.try_push(std::move(item))) {
      ++i;
    } else {
      ASSERT_NE(item, nullptr) << "a refused push leaves the value with the caller";
      std::this_thread::yield();
    }
  }
  consumer.join();
  EXPECT_EQ(sum, static_cast<long long>(kItems) * (kItems - 1) / 2);
}

}  // namespace
}  // namespace brick
