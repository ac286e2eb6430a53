#include "brick/runtime/buffer/watermarked_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/physical_memory.hpp"

namespace brick {
namespace {

const Watermarks& validated(const Watermarks& marks) {
  marks.validate("WatermarkedBuffer");
  return marks;
}

CapacityPolicy checked(CapacityPolicy policy) {
  if (policy != CapacityPolicy::Advisory && policy != CapacityPolicy::Enforcing) {
    throw InvalidArgument(fmt::format("WatermarkedBuffer: {} is not a CapacityPolicy", static_cast<int>(policy)));
  }
  return policy;
}

}  // namespace

WatermarkedBuffer::WatermarkedBuffer(const Watermarks& marks, CapacityPolicy policy,
                                     WritabilityCallback on_writability_change)
    : marks_(validated(marks)),
      policy_(checked(policy)),
      on_writability_change_(std::move(on_writability_change)),
      latch_(marks_),
      storage_(allocate_vector<std::byte>(marks_.capacity, "WatermarkedBuffer")) {}

void WatermarkedBuffer::write(std::span<const std::byte> bytes) {
  if (!try_write(bytes)) {
    throw CapacityError(fmt::format(
        "WatermarkedBuffer: writing {} bytes to {} pending would exceed the capacity of {}; nothing "
        "was written",
        bytes.size(), pending_, marks_.capacity));
  }
}

bool WatermarkedBuffer::try_write(std::span<const std::byte> bytes) {
  if (policy_ == CapacityPolicy::Enforcing && bytes.size() > remaining_capacity()) return false;
  append(bytes);
  update_writability();
  return true;
}

void WatermarkedBuffer::append(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  if (pending_ + bytes.size() > storage_.size()) grow_to(pending_ + bytes.size());
  const std::size_t size = storage_.size();
  const std::size_t tail = (head_ + pending_) % size;
  const std::size_t first = std::min(bytes.size(), size - tail);
  std::memcpy(storage_.data() + tail, bytes.data(), first);
  std::memcpy(storage_.data(), bytes.data() + first, bytes.size() - first);
  pending_ += bytes.size();
}

void WatermarkedBuffer::grow_to(std::size_t bytes) {
  // Doubling keeps appends amortised O(1), as long as the double fits in memory.
  const std::size_t doubled = storage_.size() <= physical_memory_bytes() / 2 ? 2 * storage_.size() : bytes;
  std::vector<std::byte> grown = allocate_vector<std::byte>(std::max(bytes, doubled), "WatermarkedBuffer");
  peek(grown);
  storage_.swap(grown);
  head_ = 0;
}

std::size_t WatermarkedBuffer::peek(std::span<std::byte> out) const noexcept {
  const std::size_t n = std::min(out.size(), pending_);
  if (n == 0) return 0;
  const std::size_t first = std::min(n, storage_.size() - head_);
  std::memcpy(out.data(), storage_.data() + head_, first);
  std::memcpy(out.data() + first, storage_.data(), n - first);
  return n;
}

std::size_t WatermarkedBuffer::read(std::span<std::byte> out) {
  const std::size_t n = peek(out);
  consume(n);
  return n;
}

std::size_t WatermarkedBuffer::discard(std::size_t n) {
  n = std::min(n, pending_);
  consume(n);
  return n;
}

void WatermarkedBuffer::consume(std::size_t n) {
  if (n == 0) return;
  head_ = (head_ + n) % storage_.size();
  pending_ -= n;
  update_writability();
}

void WatermarkedBuffer::update_writability() {
  if (latch_.update(pending_) && on_writability_change_) on_writability_change_(latch_.writable());
}

}  // namespace brick
