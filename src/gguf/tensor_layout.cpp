#include "gguf/tensor_layout.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

namespace brick::gguf::detail {
namespace {

constexpr std::uint64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

}  // namespace

std::optional<std::uint64_t> align_up(std::uint64_t offset, std::uint64_t alignment) noexcept {
  const std::uint64_t mask = alignment - 1;
  if (offset > std::numeric_limits<std::uint64_t>::max() - mask) return std::nullopt;
  return (offset + mask) & ~mask;
}

bool shape_fits_int64(std::span<const std::uint64_t, kMaxDims> ne) noexcept {
  std::uint64_t product = 1;
  for (const std::uint64_t n : ne) {
    if (n > kInt64Max) return false;
    if (n == 0) continue;
    if (__builtin_mul_overflow(product, n, &product) || product > kInt64Max) return false;
  }
  return true;
}

std::optional<std::uint64_t> tensor_bytes(quant::TensorType type,
                                          std::span<const std::uint64_t, kMaxDims> ne) noexcept {
  const quant::TensorTypeTraits& traits = quant::traits(type);
  std::uint64_t bytes = ne[0] / traits.block_values;
  if (__builtin_mul_overflow(bytes, std::uint64_t{traits.block_bytes}, &bytes)) return std::nullopt;
  for (std::size_t i = 1; i < kMaxDims; ++i) {
    if (__builtin_mul_overflow(bytes, ne[i], &bytes)) return std::nullopt;
  }
  return bytes;
}

std::uint32_t ggml_n_dims(std::span<const std::uint64_t, kMaxDims> ne) noexcept {
  std::uint32_t dims = kMaxDims;
  while (dims > 1 && ne[dims - 1] == 1) --dims;
  return dims;
}

std::string shape_text(std::span<const std::uint64_t> ne) {
  return fmt::format("[{}]", fmt::join(ne, ", "));
}

}  // namespace brick::gguf::detail
