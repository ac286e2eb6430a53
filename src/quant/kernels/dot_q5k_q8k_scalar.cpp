// The reference Q5_K·Q8_K dot product (see dot_scale_min_scalar.hpp).
#include <cstdint>

#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_scale_min_scalar.hpp"

namespace brick::quant::kernels {
namespace {

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
  return dot_scale_min_reference(w, x, blocks, quant);
}

}  // namespace brick::quant::kernels
