#pragma once
// balance211: oneDNN's split of n items over a team of threads. With n1 = ceil(n / team),
// n2 = n1 - 1 and T1 = n - n2 * team, the first T1 threads get n1 items and the rest get n2, so the
// ranges are contiguous, cover [0, n) and differ in size by at most one.
#include <cstddef>

namespace brick {

struct Range {
  std::size_t begin = 0;
  std::size_t end = 0;

  constexpr std::size_t size() const noexcept { return end - begin; }
  constexpr bool empty() const noexcept { return end == begin; }
  friend constexpr bool operator==(const Range&, const Range&) = default;
};

// The range of thread `tid` (0 <= tid < team). team == 0 or tid >= team yields an empty range.
constexpr Range balance211(std::size_t n, std::size_t team, std::size_t tid) noexcept {
  if (team == 0 || tid >= team || n == 0) return {n, n};
  if (team == 1) return {0, n};
  const std::size_t n1 = (n + team - 1) / team;
  const std::size_t n2 = n1 - 1;
  const std::size_t t1 = n - n2 * team;
  const std::size_t size = tid < t1 ? n1 : n2;
  const std::size_t begin = tid <= t1 ? tid * n1 : t1 * n1 + (tid - t1) * n2;
  return {begin, begin + size};
}

}  // namespace brick
