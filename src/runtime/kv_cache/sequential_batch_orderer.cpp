#include "brick/runtime/kv_cache/sequential_batch_orderer.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {

std::size_t SequentialBatchOrderer::at(std::size_t step) const {
  if (step >= batches_) {
    throw InvalidArgument(fmt::format("SequentialBatchOrderer: step {} is outside 0..{}", step, batches_));
  }
  switch (order_) {
    case BatchOrder::InOrder: return step;
    case BatchOrder::Reversed: return batches_ - 1 - step;
    case BatchOrder::Interleaved: return step % 2 == 0 ? step / 2 : batches_ - 1 - step / 2;
  }
  return step;
}

std::vector<std::size_t> SequentialBatchOrderer::sequence() const {
  std::vector<std::size_t> steps(batches_);
  for (std::size_t i = 0; i < batches_; ++i) steps[i] = at(i);
  return steps;
}

}  // namespace brick
