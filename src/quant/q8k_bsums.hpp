#pragma once
// The SIMD k-quant dots take a Q8_K block's bsums as given, as ggml's do (the Q6_K offset and the
// Q4_K / Q5_K mins come from them), where the scalar reference sums the quants itself. Activations
// that come from outside the library are checked at the boundary, so that a block whose bsums are
// not its sums is refused instead of giving each backend another answer.
#include <span>
#include <string_view>

#include "brick/quant/kquants.hpp"

namespace brick::quant::detail {

// InvalidArgument naming `what`, the block and the group unless every bsums[g] of x is the sum of
// qs[16g .. 16g+16). Reads x once: about a third of a dot product's work.
void require_consistent_bsums(std::span<const BlockQ8K> x, std::string_view what);

}  // namespace brick::quant::detail
