#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/advice.hpp"
#include "brick/runtime/memory/aligned_buffer.hpp"
#include "brick/runtime/memory/cache_aligned.hpp"
#include "brick/runtime/memory/mapped_file.hpp"
#include "brick/runtime/memory/prefetch.hpp"

namespace brick {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

bool all_zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

TEST(AlignedBuffer, HeapBlockHonoursEveryPowerOfTwoAlignment) {
  for (std::size_t alignment = 1; alignment <= 8192; alignment *= 2) {
    for (std::size_t size : {1u, 7u, 64u, 1000u}) {
      AlignedBuffer buffer(size, alignment);
      ASSERT_EQ(buffer.size(), size);
      EXPECT_EQ(address(buffer.data()) % alignment, 0u) << "alignment " << alignment;
      EXPECT_GE(buffer.alignment(), alignment);
      EXPECT_TRUE(all_zero(buffer.bytes()));
      std::memset(buffer.data(), 0xAB, size);  // the whole block is writable (ASan checks the bounds)
    }
  }
}

TEST(AlignedBuffer, CacheLineIsTheDefault) {
  const AlignedBuffer buffer = AlignedBuffer::cache_line_aligned(100);
  EXPECT_EQ(address(buffer.data()) % kCacheLineBytes, 0u);
  EXPECT_EQ(buffer.alignment(), kCacheLineBytes);
}

TEST(AlignedBuffer, PageAlignedMappingIsZeroedAndWritable) {
  AlignedBuffer buffer = AlignedBuffer::page_aligned(3 * page_size() + 5);
  EXPECT_EQ(address(buffer.data()) % page_size(), 0u);
  EXPECT_EQ(buffer.size(), 3 * page_size() + 5);
  EXPECT_TRUE(all_zero(buffer.bytes()));
  std::memset(buffer.data(), 1, buffer.size());
}

TEST(AlignedBuffer, HugePageMappingIsAlignedToTwoMiB) {
  AlignedBuffer buffer = AlignedBuffer::huge_page_aligned(kHugePageBytes + 1);
  EXPECT_EQ(address(buffer.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(buffer.alignment(), kHugePageBytes);
  EXPECT_TRUE(all_zero(buffer.bytes()));
  std::memset(buffer.data(), 2, buffer.size());
  // Whether THP is granted depends on the kernel; the buffer must work either way.
  SUCCEED() << "huge pages advised: " << buffer.huge_pages_advised();
}

TEST(AlignedBuffer, IsMoveOnlyAndMovesOwnership) {
  static_assert(!std::is_copy_constructible_v<AlignedBuffer>);
  static_assert(!std::is_copy_assignable_v<AlignedBuffer>);
  static_assert(std::is_nothrow_move_constructible_v<AlignedBuffer>);
  AlignedBuffer a(256);
  std::byte* const block = a.data();
  AlignedBuffer b(std::move(a));
  EXPECT_EQ(b.data(), block);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_TRUE(a.empty());
  AlignedBuffer c = AlignedBuffer::page_aligned(10);
  c = std::move(b);  // releases the mapping, takes the heap block (LeakSanitizer checks both)
  EXPECT_EQ(c.data(), block);
  EXPECT_EQ(c.size(), 256u);
}

TEST(AlignedBuffer, TypedViewChecksSizeAndAlignment) {
  AlignedBuffer buffer(64 * sizeof(float));
  const std::span<float> floats = buffer.as<float>();
  EXPECT_EQ(floats.size(), 64u);
  floats[63] = 1.5f;
  EXPECT_EQ(std::as_const(buffer).as<float>()[63], 1.5f);
  AlignedBuffer odd(10);
  EXPECT_THROW(odd.as<float>(), InvalidArgument);
  AlignedBuffer weakly_aligned(16, 1);  // raised to pointer alignment, below a cache-line type's
  EXPECT_THROW(weakly_aligned.as<CacheAligned<char>>(), InvalidArgument);
}

TEST(AlignedBuffer, RejectsBadInputWithTypedErrors) {
  EXPECT_THROW(AlignedBuffer(0), InvalidArgument);
  EXPECT_THROW(AlignedBuffer(64, 0), InvalidArgument);
  EXPECT_THROW(AlignedBuffer(64, 48), InvalidArgument);
  EXPECT_THROW(AlignedBuffer::page_aligned(0), InvalidArgument);
  EXPECT_THROW(AlignedBuffer::huge_page_aligned(0), InvalidArgument);
  EXPECT_THROW(AlignedBuffer::huge_page_aligned(SIZE_MAX - 10), InvalidArgument);
  try {
    AlignedBuffer(64, 48);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("power of two, got 48"), std::string::npos) << e.what();
  }
}

TEST(AlignedBuffer, OutOfMemoryIsACapacityErrorNamingTheSize) {
  // More address space than any machine has: mmap fails with ENOMEM.
  try {
    AlignedBuffer::page_aligned(std::size_t{1} << 62);
    FAIL() << "a 4 EiB mapping succeeded";
  } catch (const CapacityError& e) {
    EXPECT_NE(std::string(e.what()).find("Cannot allocate memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(std::size_t{1} << 62)), std::string::npos);
  }
}

TEST(CacheAligned, OccupiesWholeCacheLines) {
  static_assert(alignof(CacheAligned<char>) == kCacheLineBytes);
  static_assert(sizeof(CacheAligned<char>) == kCacheLineBytes);
  static_assert(sizeof(CacheAligned<char[65]>) == 2 * kCacheLineBytes);
  CacheAligned<std::atomic<long>> slots[4];
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_GE(address(&slots[i]) - address(&slots[i - 1]), kCacheLineBytes);
    EXPECT_EQ(address(&slots[i]) % kCacheLineBytes, 0u);
  }
  CacheAligned<std::vector<int>> values(std::in_place, 3, 7);
  EXPECT_EQ(values->size(), 3u);
  EXPECT_EQ((*values)[2], 7);
}

TEST(CacheAligned, PerThreadCountersStayExact) {
  constexpr int kThreads = 4, kIncrements = 100000;
  std::vector<CacheAligned<std::atomic<long>>> counters(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counters, t] {
      for (int i = 0; i < kIncrements; ++i) counters[t]->fetch_add(1, std::memory_order_relaxed);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& counter : counters) EXPECT_EQ(counter->load(), kIncrements);
}

TEST(Prefetch, CountsTheCacheLinesARegionTouches) {
  alignas(64) static std::byte block[512];
  EXPECT_EQ(cache_lines_spanned(block, 0), 0u);
  EXPECT_EQ(cache_lines_spanned(block, 1), 1u);
  EXPECT_EQ(cache_lines_spanned(block, 64), 1u);
  EXPECT_EQ(cache_lines_spanned(block, 65), 2u);
  EXPECT_EQ(cache_lines_spanned(block + 63, 2), 2u);
  EXPECT_EQ(cache_lines_spanned(block + 1, 128), 3u);
  EXPECT_EQ(prefetch_range<Locality::NonTemporal>(block + 10, 300), cache_lines_spanned(block + 10, 300));
  EXPECT_EQ(prefetch_range<Locality::Low>(block, 512), 8u);
  prefetch_read<Locality::Moderate>(block);
  prefetch_write<Locality::High>(block);
  prefetch_read(nullptr);  // a hint never faults
}

TEST(Advice, EveryAdviceIsAcceptedOnMappedMemory) {
  AlignedBuffer buffer = AlignedBuffer::page_aligned(8 * page_size());
  for (Advice a : {Advice::Normal, Advice::Sequential, Advice::Random, Advice::WillNeed, Advice::DontNeed}) {
    EXPECT_NO_THROW(advise(buffer.bytes(), a)) << name(a);
  }
}

TEST(Advice, PopulateReadFaultsAFilesPagesInWithoutChangingThem) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "brick_populate_read.bin";
  std::vector<char> content(3 * page_size() + 17, 'b');
  std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
  const MappedFile file(path);
  try {
    file.advise(Advice::PopulateRead);
  } catch (const IoError& e) {
    std::filesystem::remove(path);
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_READ (Linux 5.14): " << e.what();
  }
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()), file.size()),
            std::string(content.begin(), content.end()));
  EXPECT_EQ(name(Advice::PopulateRead), "populate-read");
  std::filesystem::remove(path);
}

TEST(Advice, DontNeedZeroesWholePagesOnlyInsideTheRegion) {
  AlignedBuffer buffer = AlignedBuffer::page_aligned(4 * page_size());
  std::memset(buffer.data(), 0x5A, buffer.size());
  // From the middle of page 0 to the middle of page 3: only pages 1 and 2 lie wholly inside.
  const std::size_t half = page_size() / 2;
  advise(buffer.bytes().subspan(half, 3 * page_size()), Advice::DontNeed);
  const auto bytes = buffer.bytes();
  EXPECT_EQ(bytes[page_size() - 1], std::byte{0x5A});
  EXPECT_TRUE(all_zero(bytes.subspan(page_size(), 2 * page_size())));
  EXPECT_EQ(bytes[3 * page_size()], std::byte{0x5A});
  // A region with no whole page is left alone.
  advise(bytes.subspan(3 * page_size() + 1, 10), Advice::DontNeed);
  EXPECT_EQ(bytes[3 * page_size() + 5], std::byte{0x5A});
}

TEST(Advice, UnmappedRangeIsAnIoErrorWithErrnoText) {
  void* p = mmap(nullptr, page_size(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_EQ(munmap(p, page_size()), 0);
  try {
    advise({static_cast<const std::byte*>(p), page_size()}, Advice::WillNeed);
    FAIL() << "madvise on an unmapped page succeeded";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("Cannot allocate memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("will-need"), std::string::npos) << e.what();
  }
}

TEST(Advice, EmptyRegionIsInvalid) {
  EXPECT_THROW(advise({}, Advice::Sequential), InvalidArgument);
}

TEST(Advice, AValueOutsideTheEnumIsInvalidNotNormal) {
  const AlignedBuffer buffer = AlignedBuffer::page_aligned(page_size());
  try {
    advise(buffer.bytes(), static_cast<Advice>(99));
    FAIL() << "Advice(99) was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("99 is not an Advice"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brick
