// The reference Q6_K·Q8_K dot product: every quant unpacked one at a time, integer sums exact, the
// float scale applied once per super-block and accumulated in double. Slow on purpose: this is what
// every other backend is tested against.
#include <cstdint>

#include "brick/quant/fp16.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {
namespace {

// The signed 6-bit quant of value v (0..255). Each half of 128 values uses 64 bytes of ql and 32 of
// qh; within a half, quarter k (32 values) takes the low nibbles of ql[0..31] (k=0), of ql[32..63]
// (k=1), then the high nibbles (k=2, 3), and bits 2k..2k+1 of qh[0..31] as its top two bits.
std::int32_t quant(const BlockQ6K& block, int v) {
  const int half = v / 128;
  const int quarter = (v % 128) / 32;
  const int lane = v % 32;
  const std::uint8_t packed = block.ql[64 * half + 32 * (quarter % 2) + lane];
  const int low = quarter < 2 ? (packed & 0xF) : (packed >> 4);
  const int high = (block.qh[32 * half + lane] >> (2 * quarter)) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace

float dot_q6k_q8k_scalar(const BlockQ6K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t scaled = 0;  // sum over the 16 sub-blocks of scale * (q6 . q8)
    for (int j = 0; j < 16; ++j) {
      std::int32_t dot = 0;
      for (int v = 16 * j; v < 16 * (j + 1); ++v) dot += quant(w[b], v) * x[b].qs[v];
      scaled += w[b].scales[j] * dot;
    }
    sum += static_cast<double>(fp16_to_fp32(w[b].d)) * static_cast<double>(x[b].d) * scaled;
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
