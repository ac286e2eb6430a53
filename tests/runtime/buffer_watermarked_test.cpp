#include "brick/runtime/buffer/watermarked_buffer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <vector>

#include "brick/core/error.hpp"

namespace brick {
namespace {

using ::testing::HasSubstr;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>((seed * 131 + i * 7) & 0xff);
  return bytes;
}

std::vector<std::byte> read_all(WatermarkedBuffer& buffer) {
  std::vector<std::byte> out(buffer.pending());
  EXPECT_EQ(buffer.read(out), out.size());
  return out;
}

TEST(WatermarkedBuffer, UnwritableAtHighWritableAgainOnlyBelowLow) {
  std::vector<bool> changes;
  WatermarkedBuffer buffer({.low = 4, .high = 8, .capacity = 16}, CapacityPolicy::Enforcing,
                           [&](bool writable) { changes.push_back(writable); });
  std::vector<std::byte> sink(16);
  buffer.write(pattern(7, 1));
  EXPECT_TRUE(buffer.writable());
  buffer.write(pattern(1, 2));  // 8 pending: reached high
  EXPECT_FALSE(buffer.writable());
  EXPECT_EQ(buffer.read(std::span(sink).first(3)), 3u);  // 5
  EXPECT_FALSE(buffer.writable());
  EXPECT_EQ(buffer.discard(1), 1u);  // 4: not below low yet
  EXPECT_FALSE(buffer.writable());
  buffer.write(pattern(2, 3));  // 6, still between the marks
  EXPECT_FALSE(buffer.writable());
  EXPECT_EQ(buffer.discard(3), 3u);  // 3 < low
  EXPECT_TRUE(buffer.writable());
  buffer.write(pattern(4, 4));  // 7
  EXPECT_TRUE(buffer.writable());
  buffer.write(pattern(1, 5));  // 8
  EXPECT_FALSE(buffer.writable());
  EXPECT_EQ(changes, (std::vector<bool>{false, true, false}));
}

TEST(WatermarkedBuffer, EnforcingRejectsAWritePastCapacityWholeAndKeepsEverything) {
  WatermarkedBuffer buffer({.low = 4, .high = 8, .capacity = 16}, CapacityPolicy::Enforcing);
  const std::vector<std::byte> first = pattern(10, 1);
  buffer.write(first);
  try {
    buffer.write(pattern(7, 2));
    FAIL() << "expected CapacityError";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("capacity of 16"));
  }
  EXPECT_FALSE(buffer.try_write(pattern(7, 2)));
  EXPECT_EQ(buffer.pending(), 10u);
  EXPECT_EQ(buffer.remaining_capacity(), 6u);
  const std::vector<std::byte> second = pattern(6, 3);
  buffer.write(second);  // exactly up to the capacity
  EXPECT_EQ(buffer.pending(), 16u);
  EXPECT_THROW(buffer.write(pattern(1, 4)), CapacityError);
  std::vector<std::byte> expected = first;
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_EQ(read_all(buffer), expected);
}

TEST(WatermarkedBuffer, AdvisoryAcceptsPastCapacityAndSaysSo) {
  std::vector<bool> changes;
  WatermarkedBuffer buffer({.low = 2, .high = 6, .capacity = 8}, CapacityPolicy::Advisory,
                           [&](bool writable) { changes.push_back(writable); });
  std::vector<std::byte> expected;
  for (unsigned i = 0; i < 5; ++i) {
    const auto chunk = pattern(5, i);
    buffer.write(chunk);
    expected.insert(expected.end(), chunk.begin(), chunk.end());
    if (i == 0) {
      std::vector<std::byte> head(3);
      ASSERT_EQ(buffer.read(head), 3u);  // makes later writes wrap around the ring
      expected.erase(expected.begin(), expected.begin() + 3);
    }
  }
  EXPECT_EQ(buffer.pending(), 22u);
  EXPECT_TRUE(buffer.over_capacity());
  EXPECT_EQ(buffer.remaining_capacity(), 0u);
  EXPECT_FALSE(buffer.writable());
  EXPECT_EQ(read_all(buffer), expected);
  EXPECT_TRUE(buffer.writable());
  EXPECT_EQ(changes, (std::vector<bool>{false, true}));
}

TEST(WatermarkedBuffer, PeekCopiesWithoutConsuming) {
  WatermarkedBuffer buffer({.low = 1, .high = 2, .capacity = 4}, CapacityPolicy::Enforcing);
  buffer.write(pattern(3, 9));
  std::vector<std::byte> peeked(8);
  EXPECT_EQ(buffer.peek(peeked), 3u);
  EXPECT_EQ(buffer.pending(), 3u);
  peeked.resize(3);
  EXPECT_EQ(read_all(buffer), peeked);
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(buffer.discard(5), 0u);
}

TEST(WatermarkedBuffer, RejectsBadWatermarks) {
  const auto expect_invalid = [](Watermarks marks, const char* words) {
    try {
      WatermarkedBuffer buffer(marks, CapacityPolicy::Enforcing);
      ADD_FAILURE() << "expected InvalidArgument: " << words;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr(words));
    }
  };
  expect_invalid({.low = 1, .high = 2, .capacity = 0}, "capacity must be at least 1");
  expect_invalid({.low = 0, .high = 2, .capacity = 4}, "low watermark must be at least 1");
  expect_invalid({.low = 2, .high = 2, .capacity = 4}, "must be below the high one");
  expect_invalid({.low = 3, .high = 2, .capacity = 4}, "must be below the high one");
  expect_invalid({.low = 1, .high = 5, .capacity = 4}, "must not exceed the capacity");
  EXPECT_NO_THROW(WatermarkedBuffer({.low = 1, .high = 4, .capacity = 4}, CapacityPolicy::Advisory));
}

TEST(WatermarkedBuffer, RejectsAPolicyOutsideTheEnum) {
  EXPECT_THROW(WatermarkedBuffer({.low = 1, .high = 2, .capacity = 4}, static_cast<CapacityPolicy>(9)),
               InvalidArgument);
}

// A capacity no machine can hold used to end in std::length_error.
TEST(WatermarkedBuffer, ACapacityPastMemoryIsACapacityErrorNamingTheSize) {
  try {
    WatermarkedBuffer buffer({.low = 1, .high = 2, .capacity = SIZE_MAX}, CapacityPolicy::Enforcing);
    FAIL() << "a buffer of SIZE_MAX bytes was built";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("WatermarkedBuffer: no memory for 18446744073709551615 x 1 bytes"));
  }
}

// Random writes, reads, peeks and discards against a deque and a hand-run hysteresis model.
TEST(WatermarkedBufferProperty, MatchesAReferenceModelUnderBothPolicies) {
  std::mt19937 rng(1129);
  for (const CapacityPolicy policy : {CapacityPolicy::Enforcing, CapacityPolicy::Advisory}) {
    for (int trial = 0; trial < 40; ++trial) {
      const std::size_t capacity = std::uniform_int_distribution<std::size_t>(2, 64)(rng);
      const std::size_t high = std::uniform_int_distribution<std::size_t>(2, capacity)(rng);
      const std::size_t low = std::uniform_int_distribution<std::size_t>(1, high - 1)(rng);
      int callbacks = 0;
      WatermarkedBuffer buffer({.low = low, .high = high, .capacity = capacity}, policy,
                               [&](bool) { ++callbacks; });
      std::deque<std::byte> model;
      bool model_writable = true;
      int model_flips = 0;
      const auto settle = [&] {
        if (model_writable ? model.size() >= high : model.size() < low) {
          model_writable = !model_writable;
          ++model_flips;
        }
      };
      for (int step = 0; step < 400; ++step) {
        const std::size_t n = std::uniform_int_distribution<std::size_t>(0, capacity)(rng);
        switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
          case 0: {
            const auto bytes = pattern(n, static_cast<unsigned>(step));
            const bool fits = policy == CapacityPolicy::Advisory || model.size() + n <= capacity;
            ASSERT_EQ(buffer.try_write(bytes), fits);
            if (fits) model.insert(model.end(), bytes.begin(), bytes.end());
            break;
          }
          case 1: {
            std::vector<std::byte> out(n);
            const std::size_t got = buffer.read(out);
            ASSERT_EQ(got, std::min(n, model.size()));
            for (std::size_t i = 0; i < got; ++i) {
              ASSERT_EQ(out[i], model.front());
              model.pop_front();
            }
            break;
          }
          case 2: {
            std::vector<std::byte> out(n);
            const std::size_t got = buffer.peek(out);
            ASSERT_EQ(got, std::min(n, model.size()));
            for (std::size_t i = 0; i < got; ++i) ASSERT_EQ(out[i], model[i]);
            break;
          }
          case 3: {
            const std::size_t dropped = buffer.discard(n);
            ASSERT_EQ(dropped, std::min(n, model.size()));
            model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(dropped));
            break;
          }
        }
        settle();
        ASSERT_EQ(buffer.pending(), model.size());
        ASSERT_EQ(buffer.writable(), model_writable);
        ASSERT_EQ(buffer.over_capacity(), model.size() > capacity);
        ASSERT_LE(buffer.pending(), policy == CapacityPolicy::Enforcing ? capacity : SIZE_MAX);
      }
      EXPECT_EQ(callbacks, model_flips);
    }
  }
}

}  // namespace
}  // namespace brick
