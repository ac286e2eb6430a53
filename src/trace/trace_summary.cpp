#include "brick/trace/trace_summary.hpp"

namespace brick::trace {

std::uint64_t TraceSummary::recorded_total() const noexcept {
  std::uint64_t total = 0;
  for (const std::uint64_t n : recorded) total += n;
  return total;
}

std::uint64_t TraceSummary::dropped_total() const noexcept {
  std::uint64_t total = 0;
  for (const std::uint64_t n : dropped) total += n;
  return total;
}

}  // namespace brick::trace
