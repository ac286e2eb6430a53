#pragma once
// Pieces shared by the k-quant (de)quantizers. These mirror ggml's reference arithmetic operation
// for operation: the bytes of a quantized row depend on every rounding step, so the order of float
// operations below is part of the format. ggml's reference is built without FMA, so a*b+c must
// never be contracted into one here either: the library is built with -ffp-contract=off
// (src/CMakeLists.txt), which keeps every product rounded even in files built with -mfma.
#include <fmt/format.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "brick/core/error.hpp"
#include "brick/quant/kquants.hpp"

namespace brick::quant::detail {

// Round to nearest, ties to even, the way ggml does: adding 1.5 * 2^23 leaves the rounded integer
// in the low mantissa bits. Only exact for |value| <= 2^22; outside that range (and for NaN or
// infinities, which some degenerate rows produce) it yields the same garbage ggml's does, which is
// what keeps the bytes identical.
inline int nearest_int(float value) noexcept {
  const float shifted = value + 12582912.0f;
  return static_cast<int>(std::bit_cast<std::uint32_t>(shifted) & 0x007FFFFFu) - 0x00400000;
}

// Throws InvalidArgument unless `values` is exactly 256 * `blocks`.
inline void require_whole_blocks(const char* function, std::size_t values, std::size_t blocks) {
  if (values != kBlockSize * blocks) {
    throw InvalidArgument(fmt::format(
        "{}: {} float values for {} blocks; a k-quant block holds exactly {} values, so the float "
        "span must have 256 * blocks = {} values",
        function, values, blocks, kBlockSize, kBlockSize * blocks));
  }
}

// quantize_block(x + 256 * b, out[b]) for every block, after the size check.
template <class Block, class QuantizeBlock>
void quantize_blocks(const char* function, std::span<const float> x, std::span<Block> out, QuantizeBlock quantize_block) {
  require_whole_blocks(function, x.size(), out.size());
  for (std::size_t b = 0; b < out.size(); ++b) quantize_block(x.data() + b * kBlockSize, out[b]);
}

// dequantize_block(in[b], out + 256 * b) for every block, after the size check.
template <class Block, class DequantizeBlock>
void dequantize_blocks(const char* function, std::span<const Block> in, std::span<float> out,
                       DequantizeBlock dequantize_block) {
  require_whole_blocks(function, out.size(), in.size());
  for (std::size_t b = 0; b < in.size(); ++b) dequantize_block(in[b], out.data() + b * kBlockSize);
}

}  // namespace brick::quant::detail
