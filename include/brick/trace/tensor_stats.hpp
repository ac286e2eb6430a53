#pragma once
// TensorStats: what a tensor's values look like, in one pass over them.
//
// NaN and +-Inf are counted (nan_count, inf_count) and left out of everything else: count is the
// number of finite values, and min, max, mean, std and l2_norm are over those alone (all 0 when
// there are none, e.g. an empty span or a NaN-only tensor; never NaN). Sums are in double; the mean
// and variance are merged block by block (256 floats a block, each block's mean and squared
// deviations from it in double, blocks combined with Chan's parallel form of Welford's update), so
// data far from zero (1e9 + i) keeps its variance. std is the population standard deviation.
//
// The optional histogram has `bins` equal bins over [lo, hi); finite values below lo or at or
// above hi are counted in `below` and `above`.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "brick/core/backend.hpp"

namespace brick::trace {

inline constexpr std::size_t kMaxHistogramBins = 64;

// bins == 0: no histogram. Otherwise 1 <= bins <= kMaxHistogramBins and lo < hi, both finite
// (validate() throws InvalidArgument).
struct HistogramSpec {
  std::size_t bins = 0;
  double lo = -1.0;
  double hi = 1.0;

  bool enabled() const noexcept { return bins != 0; }
  void validate() const;
  bool operator==(const HistogramSpec&) const = default;
};

struct Histogram {
  HistogramSpec spec;
  std::array<std::uint64_t, kMaxHistogramBins> counts{};  // the first spec.bins are used
  std::uint64_t below = 0;
  std::uint64_t above = 0;

  bool operator==(const Histogram&) const = default;
};

struct TensorStats {
  std::uint64_t count = 0;  // finite values
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double std = 0.0;
  double l2_norm = 0.0;
  std::uint64_t nan_count = 0;
  std::uint64_t inf_count = 0;
  Histogram histogram;  // histogram.spec.bins == 0 when none was asked for

  std::uint64_t elements() const noexcept { return count + nan_count + inf_count; }
  bool finite() const noexcept { return nan_count == 0 && inf_count == 0; }
  bool operator==(const TensorStats&) const = default;
};

// Any span; `histogram` must be valid (see HistogramSpec::validate, not checked here: the tracer
// checks it once in its config). One pass over memory: each block stays in L1 for its two sums. The
// SIMD backends add a block's lanes apart, so their mean, std and l2_norm differ from the scalar
// backend's in the last bits only; counts, min, max and the histogram are the same. Throws
// BackendUnavailable for a backend this CPU cannot run (Auto never does).
TensorStats compute_tensor_stats(std::span<const float> values, const HistogramSpec& histogram = {},
                                 Backend backend = Backend::Auto);

}  // namespace brick::trace
