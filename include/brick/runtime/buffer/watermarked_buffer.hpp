#pragma once
// A FIFO byte buffer with low/high watermarks (see watermarks.hpp) and a hard capacity, such as the
// outgoing bytes of one streaming connection. Writability changes are reported to a callback, right
// after the write or read that caused them, and can be polled with writable().
//
// Policies:
//   Enforcing  a write that would take pending bytes past the capacity is rejected whole with
//              CapacityError: nothing is written, nothing is lost, the buffer is unchanged.
//   Advisory   writes are refused only when the memory to grow is not there (CapacityError, and
//              nothing written); the watermarks and over_capacity() only signal, and the storage
//              grows past the capacity when a writer ignores them.
//
// Not thread-safe: one owner (e.g. an event loop) writes and reads. Between threads use SpscRing.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "brick/runtime/buffer/watermarks.hpp"

namespace brick {

enum class CapacityPolicy : std::uint8_t { Advisory, Enforcing };

class WatermarkedBuffer {
 public:
  // Called with the new writability each time it flips. Must not throw.
  using WritabilityCallback = std::function<void(bool writable)>;

  // Throws InvalidArgument for bad watermarks or a value that is not a CapacityPolicy, and
  // CapacityError when `capacity` bytes do not fit in memory. Allocates them once.
  WatermarkedBuffer(const Watermarks& marks, CapacityPolicy policy,
                    WritabilityCallback on_writability_change = {});

  // Appends all of `bytes`, or (Enforcing, past capacity) throws CapacityError and changes nothing.
  void write(std::span<const std::byte> bytes);
  // As write, but a rejection for capacity returns false instead of throwing.
  bool try_write(std::span<const std::byte> bytes);

  // Moves up to out.size() of the oldest pending bytes into `out`; returns how many.
  std::size_t read(std::span<std::byte> out);
  // Copies without removing.
  std::size_t peek(std::span<std::byte> out) const noexcept;
  // Drops up to n of the oldest pending bytes; returns how many.
  std::size_t discard(std::size_t n);

  std::size_t pending() const noexcept { return pending_; }
  bool empty() const noexcept { return pending_ == 0; }
  bool writable() const noexcept { return latch_.writable(); }
  bool over_capacity() const noexcept { return pending_ > marks_.capacity; }
  // Bytes that can still be written within the capacity.
  std::size_t remaining_capacity() const noexcept {
    return over_capacity() ? 0 : marks_.capacity - pending_;
  }
  const Watermarks& watermarks() const noexcept { return marks_; }
  CapacityPolicy policy() const noexcept { return policy_; }

 private:
  void append(std::span<const std::byte> bytes);
  void grow_to(std::size_t bytes);
  void consume(std::size_t n);
  void update_writability();

  Watermarks marks_;
  CapacityPolicy policy_;
  WritabilityCallback on_writability_change_;
  WritabilityLatch latch_;
  std::vector<std::byte> storage_;  // a ring: pending bytes start at head_ and may wrap
  std::size_t head_ = 0;
  std::size_t pending_ = 0;
};

}  // namespace brick
