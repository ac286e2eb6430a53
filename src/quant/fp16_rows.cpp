// Row conversions between fp16 and fp32: dispatch between the portable reference, F16C and AVX-512.
#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/quant/fp16.hpp"
#include "quant/kernels/fp16_f16c.hpp"

namespace brick::quant {
namespace {

void require_same_size(const char* function, std::size_t in, std::size_t out) {
  if (in != out) {
    throw InvalidArgument(fmt::format("{}: {} inputs but room for {} outputs; the sizes must match",
                                      function, in, out));
  }
}

// n halves converted on a resolved backend: the one dispatch of fp16_to_fp32_row and _rows.
void fp16_to_fp32_on(Backend resolved, const fp16_t* in, float* out, std::size_t n) noexcept {
  switch (resolved) {
    case Backend::Avx512:
      return kernels::fp16_to_fp32_avx512(in, out, n);
    case Backend::Avx2:
      return kernels::fp16_to_fp32_f16c(in, out, n);
    case Backend::Auto:
    case Backend::Scalar:
      break;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = fp16_to_fp32(in[i]);
}

}  // namespace

void fp16_to_fp32_row(std::span<const fp16_t> in, std::span<float> out, Backend backend) {
  require_same_size("fp16_to_fp32_row", in.size(), out.size());
  fp16_to_fp32_on(resolve(backend), in.data(), out.data(), in.size());
}

void fp16_to_fp32_rows(std::span<const fp16_t> in, std::size_t rows, std::size_t cols, std::size_t in_stride,
                       std::span<float> out, Backend backend) {
  if (in_stride < cols || (rows > 0 && in.size() < (rows - 1) * in_stride + cols) || out.size() != rows * cols) {
    throw InvalidArgument(fmt::format(
        "fp16_to_fp32_rows: {} rows of {} values {} apart need {} inputs and {} "
        "outputs, and rows at least as far apart as they are long; got {} and {}",
        rows, cols, in_stride, rows == 0 ? 0 : (rows - 1) * in_stride + cols, rows * cols, in.size(), out.size()));
  }
  const Backend chosen = resolve(backend);
  for (std::size_t r = 0; r < rows; ++r)
    fp16_to_fp32_on(chosen, in.data() + r * in_stride, out.data() + r * cols, cols);
}

void fp32_to_fp16_row(std::span<const float> in, std::span<fp16_t> out, Backend backend) {
  require_same_size("fp32_to_fp16_row", in.size(), out.size());
  switch (resolve(backend)) {
    case Backend::Avx512: return kernels::fp32_to_fp16_avx512(in.data(), out.data(), in.size());
    case Backend::Avx2: return kernels::fp32_to_fp16_f16c(in.data(), out.data(), in.size());
    case Backend::Auto:
    case Backend::Scalar: break;
  }
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = fp32_to_fp16(in[i]);
}

void fp32_to_fp16_activation(std::span<const float> in, std::span<fp16_t> out, Backend backend) {
  require_same_size("fp32_to_fp16_activation", in.size(), out.size());
  fp32_to_fp16_row(in, out, backend);
  for (std::size_t i = in.size() - in.size() % 4; i < in.size(); ++i) out[i] = fp32_to_fp16_canonical_nan(in[i]);
}

}  // namespace brick::quant
