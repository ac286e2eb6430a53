#pragma once
// A weight matrix of any type Brick computes with (see tensor_type.hpp: is_computable), viewing
// memory it does not own, e.g. a GGUF tensor in a file mapping: `rows` rows of `cols` values, row
// r at byte r * row_bytes(), its blocks in a layout (weight_layout.hpp; Plain unless repacked).
// The mat-vec and the fused projections take any of them, and mix them (llama.cpp's Q4_K_M and
// Q5_K_M files keep some projections in Q6_K).
//
// QuantMatrix<Block> is the typed view of blocks of one block type (Q4_K, Q5_K, Q6_K, Q8_0, and
// the interleaved Q4_K, Q5_K and Q6_K); it converts to a WeightMatrix. F32, F16 and BF16 matrices are
// WeightMatrix values of their type. RepackedMatrix owns a copy of a matrix in another layout.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/tensor_type.hpp"
#include "brick/quant/weight_layout.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::quant {

// The tensor type a block struct stores, and how many values one block holds.
template <class Block>
struct BlockTraits;
template <>
struct BlockTraits<BlockQ4K> {
  static constexpr TensorType type = TensorType::Q4_K;
  static constexpr WeightLayout layout = WeightLayout::Plain;
  static constexpr std::size_t values = kBlockSize;
};
template <>
struct BlockTraits<BlockQ5K> {
  static constexpr TensorType type = TensorType::Q5_K;
  static constexpr WeightLayout layout = WeightLayout::Plain;
  static constexpr std::size_t values = kBlockSize;
};
template <>
struct BlockTraits<BlockQ6K> {
  static constexpr TensorType type = TensorType::Q6_K;
  static constexpr WeightLayout layout = WeightLayout::Plain;
  static constexpr std::size_t values = kBlockSize;
};
template <>
struct BlockTraits<BlockQ80> {
  static constexpr TensorType type = TensorType::Q8_0;
  static constexpr WeightLayout layout = WeightLayout::Plain;
  static constexpr std::size_t values = kQ80BlockSize;
};

template <>
struct BlockTraits<BlockQ4KInterleaved> {
  static constexpr TensorType type = TensorType::Q4_K;
  static constexpr WeightLayout layout = WeightLayout::SubBlockInterleaved;
  static constexpr std::size_t values = kBlockSize;
};
template <>
struct BlockTraits<BlockQ5KInterleaved> {
  static constexpr TensorType type = TensorType::Q5_K;
  static constexpr WeightLayout layout = WeightLayout::SubBlockInterleaved;
  static constexpr std::size_t values = kBlockSize;
};

template <>
struct BlockTraits<BlockQ80Group> {
  static constexpr TensorType type = TensorType::Q8_0;
  static constexpr WeightLayout layout = WeightLayout::GroupedBlocks;
  static constexpr std::size_t values = BlockQ80Group::kBlocks * kQ80BlockSize;
};

// Row-major blocks of one type: row r is blocks [r * blocks_per_row(), (r + 1) * blocks_per_row()).
template <class Block>
struct QuantMatrix {
  std::span<const Block> blocks;
  std::size_t rows = 0;
  std::size_t cols = 0;

  constexpr std::size_t blocks_per_row() const noexcept { return cols / BlockTraits<Block>::values; }
  constexpr double bytes() const noexcept { return static_cast<double>(blocks.size_bytes()); }
};

using Q4KMatrix = QuantMatrix<BlockQ4K>;
using Q5KMatrix = QuantMatrix<BlockQ5K>;
using Q6KMatrix = QuantMatrix<BlockQ6K>;
using Q80Matrix = QuantMatrix<BlockQ80>;

class WeightMatrix {
 public:
  constexpr WeightMatrix() = default;
  constexpr WeightMatrix(TensorType type, std::span<const std::byte> data, std::size_t rows, std::size_t cols,
                         WeightLayout layout = WeightLayout::Plain) noexcept
      : type_(type), layout_(layout), data_(data), rows_(rows), cols_(cols) {}
  template <class Block>
  WeightMatrix(const QuantMatrix<Block>& m) noexcept  // NOLINT: a typed view is a weight matrix
      : WeightMatrix(BlockTraits<Block>::type, std::as_bytes(m.blocks), m.rows, m.cols, BlockTraits<Block>::layout) {}

  constexpr TensorType type() const noexcept { return type_; }
  constexpr WeightLayout layout() const noexcept { return layout_; }
  constexpr std::span<const std::byte> data() const noexcept { return data_; }
  constexpr std::size_t rows() const noexcept { return rows_; }
  constexpr std::size_t cols() const noexcept { return cols_; }
  // Bytes of one row (0 when cols is not a whole number of the type's blocks).
  std::size_t row_bytes() const noexcept;
  const std::byte* row(std::size_t r) const noexcept { return data_.data() + r * row_bytes(); }

 private:
  TensorType type_ = TensorType::F32;
  WeightLayout layout_ = WeightLayout::Plain;
  std::span<const std::byte> data_;
  std::size_t rows_ = 0;
  std::size_t cols_ = 0;
};

inline std::size_t rows(const WeightMatrix& w) noexcept { return w.rows(); }
inline std::size_t cols(const WeightMatrix& w) noexcept { return w.cols(); }
inline double bytes(const WeightMatrix& w) noexcept { return static_cast<double>(w.data().size()); }

// Throws InvalidArgument, naming the matrix by `what`, unless Brick computes with the type in its
// layout, cols is a positive whole number of the type's blocks (whose activation blocks are as
// wide), and data holds exactly rows rows.
void validate(const WeightMatrix& w, std::string_view what);

// out = row r of w as floats (the embedding lookup), the same floats in every layout. Throws
// InvalidArgument for a row outside w or out.size() != cols.
void dequantize_row(const WeightMatrix& w, std::size_t r, std::span<float> out);

// The layout `backend`'s kernels run fastest on for weights of `type` (as resolve() resolves it;
// BackendUnavailable when this CPU cannot run it): a repacked layout whose kernels repeat the
// plain kernel's arithmetic on this CPU (so give its bits): on AVX2 SubBlockInterleaved for Q4_K,
// Q5_K and Q6_K and GroupedBlocks for Q8_0, on AVX-512 with VNNI GroupedBlocks for Q8_0; Plain
// otherwise. A matrix takes a layout only when its rows are whole blocks of it (row_bytes()).
WeightLayout preferred_layout(TensorType type, Backend backend);

// A copy of a matrix's blocks in another layout, owning its bytes (moving it keeps matrix() valid),
// which start on a cache line.
class RepackedMatrix {
 public:
  // Throws as validate() does for `w`, and InvalidArgument when `layout` does not apply to its type.
  // With a pool, its threads repack the rows.
  RepackedMatrix(const WeightMatrix& w, WeightLayout layout, ThreadPool* pool = nullptr);

  const WeightMatrix& matrix() const noexcept { return matrix_; }

 private:
  struct alignas(64) CacheLine {
    std::byte bytes[64];
  };
  std::vector<CacheLine> lines_;
  WeightMatrix matrix_;
};

}  // namespace brick::quant
