// Row conversions between bf16 and fp32: dispatch between the portable reference and the kernels.
#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/quant/bf16.hpp"
#include "quant/kernels/bf16_rows.hpp"

namespace brick::quant {
namespace {

void require_same_size(const char* function, std::size_t in, std::size_t out) {
  if (in != out) {
    throw InvalidArgument(fmt::format("{}: {} inputs but room for {} outputs; the sizes must match", function, in, out));
  }
}

}  // namespace

void fp32_to_bf16_row(std::span<const float> in, std::span<bf16_t> out, Backend backend) {
  require_same_size("fp32_to_bf16_row", in.size(), out.size());
  switch (resolve(backend)) {
    case Backend::Avx512: return kernels::fp32_to_bf16_avx512(in.data(), out.data(), in.size());
    case Backend::Avx2: return kernels::fp32_to_bf16_avx2(in.data(), out.data(), in.size());
    case Backend::Auto:
    case Backend::Scalar: break;
  }
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = fp32_to_bf16(in[i]);
}

void bf16_to_fp32_row(std::span<const bf16_t> in, std::span<float> out) {
  require_same_size("bf16_to_fp32_row", in.size(), out.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = bf16_to_fp32(in[i]);
}

}  // namespace brick::quant
