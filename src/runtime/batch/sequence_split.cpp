#include "brick/runtime/batch/sequence_split.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/runtime/batch/balance211.hpp"

namespace brick {
namespace {

// Adds a sequence's length to a worker's sum; lengths come from the caller, so the sum is checked.
void add_tokens(std::size_t& sum, std::size_t length, std::string_view who) {
  if (__builtin_add_overflow(sum, length, &sum)) {
    throw InvalidArgument(fmt::format("{}: the token count of one worker overflows (a sequence of {} tokens)", who,
                                      length));
  }
}

SequenceSplit empty_split(std::size_t workers, std::string_view who) {
  if (workers == 0) throw InvalidArgument(fmt::format("{}: the number of workers must be positive", who));
  SequenceSplit split;
  split.sequences.resize(workers);
  split.tokens.assign(workers, 0);
  return split;
}

}  // namespace

std::size_t SequenceSplit::max_tokens() const noexcept {
  return tokens.empty() ? 0 : *std::max_element(tokens.begin(), tokens.end());
}

SequenceSplit split_by_count(std::span<const std::size_t> lengths, std::size_t workers) {
  SequenceSplit split = empty_split(workers, "split_by_count");
  for (std::size_t w = 0; w < workers; ++w) {
    const Range range = balance211(lengths.size(), workers, w);
    for (std::size_t s = range.begin; s < range.end; ++s) {
      split.sequences[w].push_back(s);
      add_tokens(split.tokens[w], lengths[s], "split_by_count");
    }
  }
  return split;
}

SequenceSplit split_by_tokens(std::span<const std::size_t> lengths, std::size_t workers) {
  SequenceSplit split = empty_split(workers, "split_by_tokens");
  std::vector<std::size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return lengths[a] > lengths[b]; });
  for (std::size_t s : order) {
    // Linear scan: batches hold tens of sequences and workers are CPU threads, so a heap buys
    // nothing; min_element returns the first (lowest) worker on ties, which keeps it deterministic.
    const auto lightest = std::min_element(split.tokens.begin(), split.tokens.end());
    const auto w = static_cast<std::size_t>(lightest - split.tokens.begin());
    split.sequences[w].push_back(s);
    add_tokens(*lightest, lengths[s], "split_by_tokens");
  }
  for (auto& indices : split.sequences) std::sort(indices.begin(), indices.end());
  return split;
}

}  // namespace brick
