#pragma once
// Weight matrices of any computable type for the mat-vec and fused-op tests, owning their bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "brick/quant/weight_matrix.hpp"
#include "quant/dot_formats_testing.hpp"
#include "support/ggml_oracle.hpp"

namespace brick::test {

struct OwnedMatrix {
  quant::TensorType type = quant::TensorType::F32;
  std::vector<std::byte> bytes;
  std::size_t rows = 0;
  std::size_t cols = 0;

  quant::WeightMatrix view() const { return {type, bytes, rows, cols}; }
  GgmlType ggml_type() const { return static_cast<GgmlType>(type); }
};

// Normally distributed weights converted as llama-quantize converts them (realistic = true), or
// every byte pattern the format allows (heavy cancellation in the dot products).
inline OwnedMatrix weight_matrix(quant::TensorType type, std::size_t rows, std::size_t cols, std::uint64_t seed,
                                 bool realistic = true) {
  OwnedMatrix m{type, {}, rows, cols};
  const bool known = quant::detail::with_format(type, [&](auto format) {
    using Format = decltype(format);
    using Testing = FormatTesting<Format>;
    const std::size_t blocks = rows * cols / Format::kValues;
    std::vector<typename Format::Weight> w;
    if (!realistic) {
      w = Testing::random_weights(blocks, seed);
    } else if constexpr (Format::kValues == quant::kBlockSize && Format::kLayout == quant::WeightLayout::Plain) {
      w = realistic_blocks<typename Format::Weight>(blocks, seed);
    } else {
      w = Testing::weights_from(normal(rows * cols, seed, 0.0f, 0.02f));
    }
    m.bytes.resize(w.size() * sizeof(w[0]));
    std::memcpy(m.bytes.data(), w.data(), m.bytes.size());
  });
  if (!known) throw std::invalid_argument("weight_matrix: not a computable type");
  return m;
}

// Every weight type Brick computes with.
inline const std::vector<quant::TensorType>& computable_types() {
  static const std::vector<quant::TensorType> types = [] {
    std::vector<quant::TensorType> out;
    for (std::uint32_t id = 0; id < 64; ++id) {
      const auto traits = quant::tensor_type_traits(id);
      if (traits && quant::is_computable(traits->type)) out.push_back(traits->type);
    }
    return out;
  }();
  return types;
}

}  // namespace brick::test
