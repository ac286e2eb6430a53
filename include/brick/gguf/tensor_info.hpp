#pragma once
// One tensor of a GGUF file: its name, element type, shape in ggml's order (ne[0] is the length of
// a row, the fastest-moving dimension) and where its bytes lie in the data section.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "brick/quant/tensor_type.hpp"

namespace brick::gguf {

inline constexpr std::size_t kMaxDims = 4;  // GGML_MAX_DIMS
inline constexpr std::size_t kMaxNameBytes = 63;  // GGML_MAX_NAME - 1: ggml keeps names in char[64]

struct TensorInfo {
  std::string name;
  quant::TensorType type = quant::TensorType::F32;
  std::uint32_t n_dims = 1;
  std::array<std::uint64_t, kMaxDims> ne = {1, 1, 1, 1};  // unused dimensions are 1
  std::uint64_t offset = 0;  // from the start of the data section
  std::uint64_t bytes = 0;   // ggml_nbytes: rows of ne[0] values in `type`

  std::uint64_t elements() const noexcept { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::uint64_t rows() const noexcept { return ne[1] * ne[2] * ne[3]; }

  friend bool operator==(const TensorInfo&, const TensorInfo&) = default;
};

}  // namespace brick::gguf
