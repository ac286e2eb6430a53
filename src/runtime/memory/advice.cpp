#include "brick/runtime/memory/advice.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "runtime/os_error.hpp"

namespace brick {
namespace {

#ifdef MADV_POPULATE_READ
constexpr int kPopulateRead = MADV_POPULATE_READ;
#else
constexpr int kPopulateRead = 22;  // Linux's value, for C libraries older than the kernel
#endif

int native(Advice advice) {
  switch (advice) {
    case Advice::Normal: return MADV_NORMAL;
    case Advice::Sequential: return MADV_SEQUENTIAL;
    case Advice::Random: return MADV_RANDOM;
    case Advice::WillNeed: return MADV_WILLNEED;
    case Advice::DontNeed: return MADV_DONTNEED;
    case Advice::PopulateRead: return kPopulateRead;
  }
  throw InvalidArgument(fmt::format("advise: {} is not an Advice value", static_cast<int>(advice)));
}

}  // namespace

std::string_view name(Advice advice) noexcept {
  switch (advice) {
    case Advice::Normal: return "normal";
    case Advice::Sequential: return "sequential";
    case Advice::Random: return "random";
    case Advice::WillNeed: return "will-need";
    case Advice::DontNeed: return "dont-need";
    case Advice::PopulateRead: return "populate-read";
  }
  return "unknown";
}

std::size_t page_size() noexcept {
  static const std::size_t bytes = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

void advise(std::span<const std::byte> region, Advice advice) {
  const int native_advice = native(advice);
  if (region.empty()) throw InvalidArgument(fmt::format("advise({}): the region is empty", name(advice)));
  const std::uintptr_t page = page_size();
  const auto begin = reinterpret_cast<std::uintptr_t>(region.data());
  const std::uintptr_t end = begin + region.size();
  std::uintptr_t first, last;
  if (advice == Advice::DontNeed) {
    first = (begin + page - 1) & ~(page - 1);
    last = end & ~(page - 1);
    if (last <= first) return;
  } else {
    first = begin & ~(page - 1);
    last = (end + page - 1) & ~(page - 1);
  }
  if (madvise(reinterpret_cast<void*>(first), last - first, native_advice) != 0) {
    const int error = errno;
    throw IoError(fmt::format("madvise({}) of {} bytes at {:#x} failed: {}", name(advice), last - first,
                              first, detail::errno_text(error)));
  }
}

}  // namespace brick
