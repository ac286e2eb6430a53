#pragma once
// Splitting a batch of sequences of different lengths over workers. Each sequence goes whole to one
// worker (its tokens attend to each other, so it is not cut).
//
//  - split_by_count: balance211 over the sequences in batch order; worker w gets a contiguous run
//    and the counts differ by at most one. Cheap, but blind to lengths.
//  - split_by_tokens: minimises the largest per-worker token sum with LPT (longest processing time
//    first): sequences by decreasing length (ties: lower index first) each go to the worker with
//    the smallest sum so far (ties: lower worker). Guarantee (Graham 1969), with m workers:
//        max_tokens <= (4/3 - 1/(3m)) * OPT,
//    where OPT is the best possible largest sum; and always max_tokens >= max(ceil(total/m), longest).
//
// Both are deterministic: the same lengths and worker count give the same split.
#include <cstddef>
#include <span>
#include <vector>

namespace brick {

struct SequenceSplit {
  // sequences[w]: the batch indices of the sequences worker w processes, ascending.
  std::vector<std::vector<std::size_t>> sequences;
  // tokens[w]: the sum of their lengths.
  std::vector<std::size_t> tokens;

  std::size_t workers() const noexcept { return sequences.size(); }
  std::size_t max_tokens() const noexcept;
};

// Throw InvalidArgument when workers == 0 or a worker's token sum would overflow std::size_t.
SequenceSplit split_by_count(std::span<const std::size_t> lengths, std::size_t workers);
SequenceSplit split_by_tokens(std::span<const std::size_t> lengths, std::size_t workers);

}  // namespace brick
