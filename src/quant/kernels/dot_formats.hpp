#pragma once
// The weight formats Brick computes with, as the dot kernels see them: each pairs a weight block
// with the activation block llama.cpp's CPU mat-vec converts x into for that weight type (its
// vec_dot_type), and fixes the signatures of the format's four kernel shapes. A "block" of F32,
// F16 and BF16 rows is one value. Types and constants only: the per-ISA translation units include
// this header, so nothing here may compile to code.
#include <cstddef>
#include <string_view>

#include "brick/quant/bf16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/q8_0.hpp"
#include "brick/quant/tensor_type.hpp"
#include "brick/quant/weight_layout.hpp"

namespace brick::quant::detail {

// The activation formats of llama.cpp's CPU mat-vecs, Q8_K permuted for interleaved weights
// (interleave_q8k), and Q8_0 grouped for grouped weights (group_q8_0).
enum class ActivationType : unsigned char { F32, Q8K, Q8_0, F16, BF16, Q8KInterleaved, Q8_0Grouped };
inline constexpr std::size_t kActivationTypes = 7;

template <TensorType kWeightType, class WeightBlock, ActivationType kActivationType, class ActivationBlock,
          std::size_t kValuesPerBlock, WeightLayout kWeightLayout = WeightLayout::Plain>
struct DotFormat {
  static constexpr TensorType kType = kWeightType;
  static constexpr WeightLayout kLayout = kWeightLayout;
  static constexpr ActivationType kActivation = kActivationType;
  static constexpr std::size_t kValues = kValuesPerBlock;  // values per block
  using Weight = WeightBlock;
  using Activation = ActivationBlock;

  // The dot product of `blocks` weight blocks and as many activation blocks.
  using Row = float (*)(const Weight* w, const Activation* x, std::size_t blocks) noexcept;
  // out[r] = row r . x for `rows` rows of `blocks` blocks laid end to end from w: the row kernel's
  // bits on each row.
  using Rows = void (*)(const Weight* w, std::size_t rows, const Activation* x, std::size_t blocks,
                        float* out) noexcept;
  // out[r][i] = (starts[r] + i * blocks) . x for i < count: four runs of rows anywhere in memory, the
  // row kernel's bits on each row.
  using FourRuns = void (*)(const Weight* const (&starts)[4], std::size_t count, const Activation* x,
                            std::size_t blocks, float* const (&out)[4]) noexcept;
  // The GEMM of prompts: out[t * out_stride + r] = row r . x_t for `rows` rows laid end to end from
  // w and `tokens` activations of `blocks` blocks laid end to end from x: the row kernel's bits on
  // each (row, token).
  using Tokens = void (*)(const Weight* w, std::size_t rows, const Activation* x, std::size_t tokens,
                          std::size_t blocks, float* out, std::size_t out_stride) noexcept;
};

using F32Format = DotFormat<TensorType::F32, float, ActivationType::F32, float, 1>;
using F16Format = DotFormat<TensorType::F16, fp16_t, ActivationType::F16, fp16_t, 1>;
using BF16Format = DotFormat<TensorType::BF16, bf16_t, ActivationType::BF16, bf16_t, 1>;
using Q80Format = DotFormat<TensorType::Q8_0, BlockQ80, ActivationType::Q8_0, BlockQ80, kQ80BlockSize>;
using Q4KFormat = DotFormat<TensorType::Q4_K, BlockQ4K, ActivationType::Q8K, BlockQ8K, kBlockSize>;
using Q5KFormat = DotFormat<TensorType::Q5_K, BlockQ5K, ActivationType::Q8K, BlockQ8K, kBlockSize>;
using Q6KFormat = DotFormat<TensorType::Q6_K, BlockQ6K, ActivationType::Q8K, BlockQ8K, kBlockSize>;
using Q80GroupedFormat = DotFormat<TensorType::Q8_0, BlockQ80Group, ActivationType::Q8_0Grouped, BlockQ80Group,
                                   BlockQ80Group::kBlocks * kQ80BlockSize, WeightLayout::GroupedBlocks>;
using Q4KInterleavedFormat = DotFormat<TensorType::Q4_K, BlockQ4KInterleaved, ActivationType::Q8KInterleaved,
                                       BlockQ8KInterleaved, kBlockSize, WeightLayout::SubBlockInterleaved>;
using Q5KInterleavedFormat = DotFormat<TensorType::Q5_K, BlockQ5KInterleaved, ActivationType::Q8KInterleaved,
                                       BlockQ8KInterleaved, kBlockSize, WeightLayout::SubBlockInterleaved>;
using Q6KInterleavedFormat = DotFormat<TensorType::Q6_K, BlockQ6KInterleaved, ActivationType::Q8KInterleaved,
                                       BlockQ8KInterleaved, kBlockSize, WeightLayout::SubBlockInterleaved>;

}  // namespace brick::quant::detail
