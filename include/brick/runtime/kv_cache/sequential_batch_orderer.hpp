#pragma once
// The order in which n batches (e.g. prompt chunks, or ubatches of a request) are processed:
//   InOrder:     0, 1, 2, ..., n-1
//   Reversed:    n-1, n-2, ..., 0
//   Interleaved: 0, n-1, 1, n-2, 2, ...: alternately the lowest and the highest not yet taken, which
//                mixes short and long batches when they are sorted by size.
// Every order is a permutation of 0..n-1.
#include <cstddef>
#include <vector>

namespace brick {

enum class BatchOrder { InOrder, Reversed, Interleaved };

class SequentialBatchOrderer {
 public:
  SequentialBatchOrderer(std::size_t batches, BatchOrder order) noexcept : batches_(batches), order_(order) {}

  std::size_t size() const noexcept { return batches_; }
  BatchOrder order() const noexcept { return order_; }

  // The batch processed at step i (0 <= i < size()); InvalidArgument otherwise.
  std::size_t at(std::size_t step) const;
  std::vector<std::size_t> sequence() const;

 private:
  std::size_t batches_;
  BatchOrder order_;
};

}  // namespace brick
