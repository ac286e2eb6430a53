#pragma once
// y = W x for a k-quant weight matrix W and an f32 vector x: the batch-1 mat-vec of LLM decoding.
// x is quantized to Q8_K once; the rows are split over a ThreadPool with balance211 and each row is
// one dot product with the kernel the backend selects (see dot_kernels.hpp).
#include <cstddef>
#include <span>
#include <variant>

#include "brick/core/backend.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::quant {

// A row-major matrix of `rows` rows of `cols` values (a multiple of 256); row r is blocks
// [r * cols / 256, (r + 1) * cols / 256). Views memory it does not own, e.g. a GGUF tensor.
template <class Block>
struct QuantMatrix {
  std::span<const Block> blocks;
  std::size_t rows = 0;
  std::size_t cols = 0;

  constexpr std::size_t blocks_per_row() const noexcept { return cols / kBlockSize; }
  constexpr double bytes() const noexcept { return static_cast<double>(blocks.size_bytes()); }
};

using Q5KMatrix = QuantMatrix<BlockQ5K>;
using Q6KMatrix = QuantMatrix<BlockQ6K>;

// A weight matrix of either type: llama.cpp's mixed quantizations (Q5_K_M, ...) store some
// projections as Q6_K and others as Q5_K.
using KQuantMatrix = std::variant<Q5KMatrix, Q6KMatrix>;

std::size_t rows(const KQuantMatrix& w) noexcept;
std::size_t cols(const KQuantMatrix& w) noexcept;
double bytes(const KQuantMatrix& w) noexcept;

// Throws InvalidArgument unless cols is a positive multiple of 256 and blocks holds exactly
// rows * cols / 256 blocks. `what` names the matrix in the message.
void validate(const KQuantMatrix& w, std::string_view what);

// y = W x with x.size() == cols and y.size() == rows (else InvalidArgument). Quantizes x into a
// per-thread scratch buffer that grows on first use of a wider x and is reused afterwards.
void matvec(const KQuantMatrix& w, std::span<const float> x, std::span<float> y, ThreadPool& pool,
            Backend backend = Backend::Auto);

// The same with x already in Q8_K (xq.size() == cols / 256): allocates nothing.
void matvec(const KQuantMatrix& w, std::span<const BlockQ8K> xq, std::span<float> y, ThreadPool& pool,
            Backend backend = Backend::Auto);

}  // namespace brick::quant
