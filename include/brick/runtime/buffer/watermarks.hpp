#pragma once
// Watermarks with hysteresis for flow control between a producer and a slower consumer. The writer
// is told to stop when the pending amount reaches `high` and to resume only once it has dropped
// below `low`, so a buffer hovering around one mark does not flap. `capacity` is the hard bound.
#include <cstddef>
#include <string_view>

namespace brick {

struct Watermarks {
  std::size_t low = 0;       // writable again when pending < low; 1 <= low < high
  std::size_t high = 0;      // unwritable once pending >= high; high <= capacity
  std::size_t capacity = 0;  // >= 1

  // Throws InvalidArgument naming `owner` and the broken rule.
  void validate(std::string_view owner) const;
};

// The writability state machine. Not thread-safe: one owner drives it.
class WritabilityLatch {
 public:
  explicit WritabilityLatch(const Watermarks& marks) noexcept : low_(marks.low), high_(marks.high) {}

  bool writable() const noexcept { return writable_; }

  // Feeds the current pending amount; returns true when writability flipped.
  bool update(std::size_t pending) noexcept {
    if (writable_ ? pending >= high_ : pending < low_) {
      writable_ = !writable_;
      return true;
    }
    return false;
  }

 private:
  std::size_t low_;
  std::size_t high_;
  bool writable_ = true;
};

}  // namespace brick
