// Q8_K: the activation format of the k-quant dot products, x ~= d * q with q in -128..127 (in
// practice -127..127) and the sum of each group of 16 quants precomputed. Same bytes as ggml's
// quantize_row_q8_K (which on x86 is quantize_row_q8_K_ref), with bsums 0 for an all-zero block
// where ggml leaves them unwritten.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "brick/core/backend.hpp"
#include "brick/quant/kquants.hpp"
#include "quant/kernels/quantize_q8k.hpp"
#include "quant/kquant_common.hpp"
#include "quant/q8k_bsums.hpp"

namespace brick::quant {
namespace {

void quantize_block(const float* x, BlockQ8K& block) {
  float max = 0;
  float amax = 0;
  for (std::size_t j = 0; j < kBlockSize; ++j) {
    const float ax = std::fabs(x[j]);
    if (ax > amax) {
      amax = ax;
      max = x[j];
    }
  }
  if (amax == 0.0f) {
    std::memset(&block, 0, sizeof(block));
    return;
  }
  // -127 rather than -128 keeps every quant in -127..127 (ggml's choice, for its IQ2 kernels).
  const float iscale = -127.f / max;
  for (std::size_t j = 0; j < kBlockSize; ++j) {
    block.qs[j] = static_cast<std::int8_t>(std::min(127, detail::nearest_int(iscale * x[j])));
  }
  for (std::size_t g = 0; g < kBlockSize / 16; ++g) {
    int sum = 0;
    for (std::size_t i = 0; i < 16; ++i) sum += block.qs[g * 16 + i];
    block.bsums[g] = static_cast<std::int16_t>(sum);
  }
  block.d = 1 / iscale;
}

}  // namespace

void quantize_q8k(std::span<const float> x, std::span<BlockQ8K> out, Backend backend) {
  detail::require_whole_blocks("quantize_q8k", x.size(), out.size());
  switch (resolve(backend)) {
    case Backend::Avx512: return kernels::quantize_q8k_avx512(x.data(), out.data(), out.size());
    case Backend::Avx2: return kernels::quantize_q8k_avx2(x.data(), out.data(), out.size());
    case Backend::Auto:
    case Backend::Scalar: break;
  }
  for (std::size_t b = 0; b < out.size(); ++b) quantize_block(x.data() + b * kBlockSize, out[b]);
}

void dequantize_q8k(std::span<const BlockQ8K> in, std::span<float> out) {
  detail::require_whole_blocks("dequantize_q8k", out.size(), in.size());
  for (std::size_t b = 0; b < in.size(); ++b) {
    for (std::size_t j = 0; j < kBlockSize; ++j) out[b * kBlockSize + j] = in[b].d * in[b].qs[j];
  }
}

namespace detail {

void require_consistent_bsums(std::span<const BlockQ8K> x, std::string_view what) {
  for (std::size_t b = 0; b < x.size(); ++b) {
    for (std::size_t g = 0; g < kBlockSize / 16; ++g) {
      int sum = 0;
      for (std::size_t i = 0; i < 16; ++i) sum += x[b].qs[g * 16 + i];
      if (sum != x[b].bsums[g]) {
        throw InvalidArgument(fmt::format(
            "{}: Q8_K block {} has bsums[{}] = {} but its quants sum to {}; the bsums must be the "
            "ones quantize_q8k writes",
            what, b, g, x[b].bsums[g], sum));
      }
    }
  }
}

}  // namespace detail
}  // namespace brick::quant
