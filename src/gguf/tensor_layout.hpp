#pragma once
// The arithmetic of a tensor's place in a GGUF file, shared by the reader and the writer so both
// apply ggml's rules the same way, every step checked for overflow.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "brick/gguf/tensor_info.hpp"
#include "brick/quant/tensor_type.hpp"

namespace brick::gguf::detail {

inline constexpr bool is_power_of_two(std::uint64_t value) noexcept {
  return value != 0 && (value & (value - 1)) == 0;
}

// `offset` rounded up to a multiple of `alignment` (a power of two), or nothing on overflow.
std::optional<std::uint64_t> align_up(std::uint64_t offset, std::uint64_t alignment) noexcept;

// Whether a shape stays inside ggml's int64 element counts: every dimension, and the product of
// the non-zero ones, at most INT64_MAX.
bool shape_fits_int64(std::span<const std::uint64_t, kMaxDims> ne) noexcept;

// ggml_nbytes of a tensor whose ne[0] is a whole number of `type`'s blocks and whose shape fits
// (see above): rows of ne[0] values; nothing when the byte count overflows.
std::optional<std::uint64_t> tensor_bytes(quant::TensorType type,
                                          std::span<const std::uint64_t, kMaxDims> ne) noexcept;

// The number of dimensions ggml writes for a shape: the trailing dimensions of 1 are left out,
// but at least one is kept (ggml_n_dims).
std::uint32_t ggml_n_dims(std::span<const std::uint64_t, kMaxDims> ne) noexcept;

// "[4096, 32000]": a shape for error messages.
std::string shape_text(std::span<const std::uint64_t> ne);

}  // namespace brick::gguf::detail
