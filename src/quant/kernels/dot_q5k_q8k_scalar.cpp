// The reference Q5_K·Q8_K dot product: every quant unpacked one at a time, integer sums exact, the
// float scales applied once per super-block and accumulated in double. Slow on purpose: this is
// what every other backend is tested against.
#include <cstdint>

#include "brick/quant/fp16.hpp"
#include "quant/kernels/dot_kernel_list.hpp"

namespace brick::quant::kernels {
namespace {

struct ScaleMin {
  std::int32_t scale;
  std::int32_t min;
};

// Sub-block j's 6-bit scale and min: the first four live in the low 6 bits of bytes 0-3 / 4-7, the
// last four are split into a low nibble in bytes 8-11 and two high bits on top of bytes 0-7.
ScaleMin scale_min(const std::uint8_t* packed, int j) {
  if (j < 4) return {packed[j] & 63, packed[j + 4] & 63};
  return {(packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4),
          (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4)};
}

// The 5-bit quant of value v (0..255): values come in chunks of 64 sharing 32 bytes of qs (low
// nibbles first, then high nibbles); bit j of qh[v % 32] is the fifth bit of sub-block j.
std::int32_t quant(const BlockQ5K& block, int v) {
  const int sub_block = v / 32;
  const int lane = v % 32;
  const std::uint8_t packed = block.qs[32 * (sub_block / 2) + lane];
  const int low = sub_block % 2 == 0 ? (packed & 0xF) : (packed >> 4);
  const int high = (block.qh[lane] >> sub_block) & 1;
  return low | (high << 4);
}

}  // namespace

float dot_q5k_q8k_scalar(const BlockQ5K* w, const BlockQ8K* x, std::size_t blocks) noexcept {
  double sum = 0.0;
  for (std::size_t b = 0; b < blocks; ++b) {
    std::int32_t scaled = 0;  // sum over sub-blocks of scale * (q5 . q8)
    std::int32_t mins = 0;    // sum over sub-blocks of min * (sum of q8)
    for (int j = 0; j < 8; ++j) {
      const ScaleMin sm = scale_min(w[b].scales, j);
      std::int32_t dot = 0;
      for (int v = 32 * j; v < 32 * (j + 1); ++v) dot += quant(w[b], v) * x[b].qs[v];
      scaled += sm.scale * dot;
      mins += sm.min * (x[b].bsums[2 * j] + x[b].bsums[2 * j + 1]);
    }
    const double dx = x[b].d;
    sum += static_cast<double>(fp16_to_fp32(w[b].d)) * dx * scaled -
           static_cast<double>(fp16_to_fp32(w[b].dmin)) * dx * mins;
  }
  return static_cast<float>(sum);
}

}  // namespace brick::quant::kernels
