#pragma once
// find_divergence: the first kernel at which a candidate run's checksums leave a reference run's.
//
// It walks the candidate's log in execution order and looks each entry up in the reference by key
// (kernel, layer, token position, call index). Exact mode compares the XXH3-64 of the bytes;
// tolerance mode compares the numeric summaries: a backend that sums in another order gives other
// bits but the same numbers within a relative tolerance. The report names the first divergent
// entry with both checksums and the size of the difference, counts all divergent entries, and
// lists the entries that only one side has.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brick/graph/kernel_checksum.hpp"

namespace brick::graph {

enum class CompareMode : std::uint8_t { Exact, Tolerance };

// "exact" or "tolerance"; the parser is case-insensitive.
std::string_view name(CompareMode mode) noexcept;
std::optional<CompareMode> parse_compare_mode(std::string_view text) noexcept;

// Backends whose sums run in another order agree to a few 1e-3 on the synthetic models (k-quants,
// 16 layers: a Q8_K activation rounding that flips moves a whole output row a little); a wrong
// kernel moves it by far more.
inline constexpr double kDefaultTolerance = 2e-2;

// How far apart two summaries are, relative to the size of the values: the larger of
//   |sum a - sum b| / sqrt(count * max(sum_squares))   (the largest a sum of these values can be)
//   |rms a - rms b| / max(rms)                          (root mean square over the finite values)
// 0 for equal summaries; infinity when the counts, NaN counts or Inf counts differ. The minimum and
// maximum are single values, which one flipped rounding of a quantized activation moves ten times
// more than these moments: they are reported, not compared.
double summary_difference(const NumericSummary& a, const NumericSummary& b) noexcept;

struct Divergence {
  std::size_t index = 0;  // in the candidate's log
  ChecksumKey key;
  std::uint64_t reference_hash = 0;
  std::uint64_t candidate_hash = 0;
  NumericSummary reference;
  NumericSummary candidate;
  double difference = 0.0;  // summary_difference(reference, candidate)
};

struct DivergenceReport {
  CompareMode mode = CompareMode::Exact;
  double tolerance = 0.0;            // tolerance mode's bound on summary_difference
  std::size_t compared = 0;          // entries that both logs hold
  std::size_t divergent = 0;         // of those, the ones that differ
  std::optional<Divergence> first;   // the first of them in the candidate's execution order
  std::vector<ChecksumKey> only_in_reference;  // in the reference's order
  std::vector<ChecksumKey> only_in_candidate;  // in the candidate's order
  std::uint64_t reference_dropped = 0;         // entries past a log's limit, never compared
  std::uint64_t candidate_dropped = 0;

  // A divergent entry, or an entry on one side only.
  bool diverged() const noexcept { return first.has_value() || !only_in_reference.empty() || !only_in_candidate.empty(); }
  // For a terminal: "no divergence in 1234 kernels compared (tolerance 0.001)" or the first
  // divergence with both sides' numbers, then the one-sided entries (the first few of each).
  std::string to_text() const;
  // The same as JSON (every one-sided key): {"mode", "tolerance", "compared", "divergent",
  // "diverged", "first": null or {...}, "only_in_reference": [...], "only_in_candidate": [...],
  // "reference_dropped", "candidate_dropped"}.
  std::string to_json() const;
};

// InvalidArgument for a tolerance that is negative or not finite, or a mode outside CompareMode.
DivergenceReport find_divergence(const ChecksumLog& reference, const ChecksumLog& candidate, CompareMode mode,
                                 double tolerance = kDefaultTolerance);

}  // namespace brick::graph
