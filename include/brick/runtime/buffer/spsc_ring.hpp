#pragma once
// A bounded lock-free single-producer/single-consumer ring, e.g. for streaming generated tokens from
// the inference thread to a writer thread, with the watermark signalling of watermarks.hpp.
//
// One thread pushes, one thread pops. Indices grow without bound and are masked into a power-of-two
// array; the producer publishes a slot with a release store of tail_, the consumer frees it with a
// release store of head_, each reads the other's index with acquire. Each side caches the other's
// index to keep the shared cache lines quiet.
//
// Writability is the producer's to track: it turns false when a push brings the ring to `high`
// items, and true again when the producer, pushing or polling writable(), sees fewer than `low`.
// The callback runs on the producer thread. A push is refused only when the ring is full, so the
// watermarks are the producer's contract, the capacity the hard limit.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/buffer/watermarks.hpp"
#include "brick/runtime/memory/physical_memory.hpp"

namespace brick {

template <class T>
class SpscRing {
  static_assert(std::is_default_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                "SpscRing slots are default-constructed once and then move-assigned");

 public:
  // Called on the producer thread with the new writability each time it flips. Must not throw.
  using WritabilityCallback = std::function<void(bool writable)>;

  // Throws InvalidArgument unless the capacity is a power of two and the watermarks validate, and
  // CapacityError (naming the size) when capacity slots do not fit in memory.
  explicit SpscRing(const Watermarks& marks, WritabilityCallback on_writability_change = {})
      : marks_(validated(marks)),
        mask_(marks.capacity - 1),
        slots_(allocate_vector<T>(marks.capacity, "SpscRing")),
        latch_(marks),
        on_writability_change_(std::move(on_writability_change)) {}

  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  // Producer thread only. False (and `value` untouched) when the ring is full.
  bool try_push(T&& value) {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - cached_head_ == capacity()) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (tail - cached_head_ == capacity()) return false;
    }
    slots_[tail & mask_] = std::move(value);
    tail_.store(tail + 1, std::memory_order_release);
    refresh_writability(tail + 1);
    return true;
  }
  bool try_push(const T& value) {
    T copy(value);
    return try_push(std::move(copy));
  }

  // Producer thread only. Pushes the longest prefix of `values` that fits; returns its length.
  std::size_t push(std::span<const T> values) {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (capacity() - (tail - cached_head_) < values.size()) {
      cached_head_ = head_.load(std::memory_order_acquire);
    }
    const std::size_t n = std::min(values.size(), capacity() - (tail - cached_head_));
    if (n == 0) return 0;
    for (std::size_t i = 0; i < n; ++i) slots_[(tail + i) & mask_] = values[i];
    tail_.store(tail + n, std::memory_order_release);
    refresh_writability(tail + n);
    return n;
  }

  // Producer thread only: the hysteresis state, refreshed against the consumer's progress.
  bool writable() {
    refresh_writability(tail_.load(std::memory_order_relaxed));
    return latch_.writable();
  }

  // Consumer thread only. False when the ring is empty.
  bool try_pop(T& out) {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head == cached_tail_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head == cached_tail_) return false;
    }
    out = std::move(slots_[head & mask_]);
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  std::optional<T> try_pop() {
    T value;
    if (!try_pop(value)) return std::nullopt;
    return value;
  }

  // Consumer thread only. Pops up to out.size() items in order; returns how many.
  std::size_t pop(std::span<T> out) {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (cached_tail_ - head < out.size()) cached_tail_ = tail_.load(std::memory_order_acquire);
    const std::size_t n = std::min(out.size(), cached_tail_ - head);
    for (std::size_t i = 0; i < n; ++i) out[i] = std::move(slots_[(head + i) & mask_]);
    if (n > 0) head_.store(head + n, std::memory_order_release);
    return n;
  }

  // Any thread; exact only when neither side is running.
  std::size_t size_approx() const noexcept {
    const std::size_t head = head_.load(std::memory_order_acquire);
    const std::size_t tail = tail_.load(std::memory_order_acquire);
    return tail - head;
  }
  std::size_t capacity() const noexcept { return marks_.capacity; }
  const Watermarks& watermarks() const noexcept { return marks_; }

 private:
  static const Watermarks& validated(const Watermarks& marks) {
    marks.validate("SpscRing");
    if ((marks.capacity & (marks.capacity - 1)) != 0) {
      throw InvalidArgument("SpscRing: the capacity must be a power of two, got " +
                            std::to_string(marks.capacity));
    }
    return marks;
  }

  void refresh_writability(std::size_t tail) {
    // A stale head overstates what is pending; look again before acting on it.
    if (!latch_.writable() || tail - cached_head_ >= marks_.high) {
      cached_head_ = head_.load(std::memory_order_acquire);
    }
    if (latch_.update(tail - cached_head_) && on_writability_change_) {
      on_writability_change_(latch_.writable());
    }
  }

  static constexpr std::size_t kCacheLine = 64;

  const Watermarks marks_;
  const std::size_t mask_;
  std::vector<T> slots_;

  alignas(kCacheLine) std::atomic<std::size_t> tail_{0};  // written by the producer
  std::size_t cached_head_ = 0;                           // producer's copy of head_
  WritabilityLatch latch_;                                // producer's
  WritabilityCallback on_writability_change_;             // producer's

  alignas(kCacheLine) std::atomic<std::size_t> head_{0};  // written by the consumer
  std::size_t cached_tail_ = 0;                           // consumer's copy of tail_
};

}  // namespace brick
