#include "brick/quant/quantize.hpp"

#include <fmt/format.h>

#include <cstring>

#include "brick/core/error.hpp"
#include "brick/quant/bf16.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/q8_0.hpp"

namespace brick::quant {
namespace {

template <class T>
std::span<T> as(std::span<std::byte> bytes) {
  return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
}

template <class T>
std::span<const T> as(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

}  // namespace

bool is_quantizable(TensorType type) noexcept {
  switch (type) {
    case TensorType::F32:
    case TensorType::F16:
    case TensorType::BF16:
    case TensorType::Q8_0:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
      return true;
    default:
      return false;
  }
}

void quantize(TensorType type, std::span<const float> values, std::size_t n_per_row, std::span<std::byte> out) {
  if (!is_quantizable(type)) {
    throw InvalidArgument(fmt::format("quantize: Brick does not write {} tensors", name(type)));
  }
  const auto bytes_per_row = row_bytes(type, n_per_row);
  if (n_per_row == 0 || !bytes_per_row) {
    throw InvalidArgument(fmt::format("quantize: rows of {} values are not whole {} blocks of {}", n_per_row,
                                      name(type), traits(type).block_values));
  }
  const std::size_t rows = values.size() / n_per_row;
  if (values.size() % n_per_row != 0 || out.size() != rows * *bytes_per_row) {
    throw InvalidArgument(fmt::format("quantize: {} values in rows of {} need {} bytes of {}; got {}", values.size(),
                                      n_per_row, values.size() % n_per_row == 0 ? rows * *bytes_per_row : 0,
                                      name(type), out.size()));
  }
  switch (type) {
    case TensorType::F32:
      std::memcpy(out.data(), values.data(), out.size());
      return;
    case TensorType::F16: {
      const std::span<fp16_t> halves = as<fp16_t>(out);
      for (std::size_t i = 0; i < values.size(); ++i) halves[i] = fp32_to_fp16_canonical_nan(values[i]);
      return;
    }
    case TensorType::BF16:
      return fp32_to_bf16_row(values, as<bf16_t>(out), Backend::Scalar);
    case TensorType::Q8_0:
      return quantize_q8_0(values, as<BlockQ80>(out));
    case TensorType::Q4_K:
      return quantize_q4k(values, as<BlockQ4K>(out));
    case TensorType::Q5_K:
      return quantize_q5k(values, as<BlockQ5K>(out));
    case TensorType::Q6_K:
      return quantize_q6k(values, as<BlockQ6K>(out));
    default:
      break;
  }
}

void dequantize(TensorType type, std::span<const std::byte> in, std::span<float> out) {
  const TensorTypeTraits& t = traits(type);
  if (out.size() % t.block_values != 0 || in.size() != out.size() / t.block_values * t.block_bytes) {
    throw InvalidArgument(fmt::format("dequantize: {} bytes of {} do not hold {} values", in.size(), t.name,
                                      out.size()));
  }
  switch (type) {
    case TensorType::F32:
      std::memcpy(out.data(), in.data(), in.size());
      return;
    case TensorType::F16:
      return fp16_to_fp32_row(as<fp16_t>(in), out, Backend::Scalar);
    case TensorType::BF16:
      return bf16_to_fp32_row(as<bf16_t>(in), out);
    case TensorType::Q8_0:
      return dequantize_q8_0(as<BlockQ80>(in), out);
    case TensorType::Q4_K:
      return dequantize_q4k(as<BlockQ4K>(in), out);
    case TensorType::Q5_K:
      return dequantize_q5k(as<BlockQ5K>(in), out);
    case TensorType::Q6_K:
      return dequantize_q6k(as<BlockQ6K>(in), out);
    default:
      throw InvalidArgument(fmt::format("dequantize: Brick does not read {} tensors", t.name));
  }
}

}  // namespace brick::quant
