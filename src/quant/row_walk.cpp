#include "quant/row_walk.hpp"

#include <atomic>

#include "brick/core/cpu_features.hpp"

namespace brick::quant::detail {
namespace {

constexpr int kUnpinned = -1;
std::atomic<int> pinned{kUnpinned};

}  // namespace

RowWalk row_walk_for(std::string_view vendor) noexcept {
  return vendor == "GenuineIntel" ? RowWalk::FourRuns : RowWalk::OneAfterAnother;
}

RowWalk row_walk() noexcept {
  static const RowWalk cpu_walk = row_walk_for(cpu_features().vendor);
  const int pin = pinned.load(std::memory_order_relaxed);
  return pin == kUnpinned ? cpu_walk : static_cast<RowWalk>(pin);
}

bool walks_in_four_runs(std::size_t bytes, RowWalk below) noexcept {
  const int pin = pinned.load(std::memory_order_relaxed);
  if (pin != kUnpinned) return static_cast<RowWalk>(pin) == RowWalk::FourRuns;
  return (bytes >= kFourRunsMinBytes ? row_walk() : below) == RowWalk::FourRuns;
}

RowWalkPin::RowWalkPin(RowWalk walk) noexcept
    : previous_(pinned.exchange(static_cast<int>(walk), std::memory_order_relaxed)) {}

RowWalkPin::~RowWalkPin() { pinned.store(previous_, std::memory_order_relaxed); }

}  // namespace brick::quant::detail
