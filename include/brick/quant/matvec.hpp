#pragma once
// y = W x for a weight matrix W of any computable type and an f32 vector x: the batch-1 mat-vec of
// LLM decoding. x is converted once to the activation format W's type takes in llama.cpp's CPU
// mat-vec, with its bytes (Q8_K for the k-quants, Q8_0 for Q8_0, F16 for F16, BF16 for BF16, F32
// for F32 weights); the rows are split over a ThreadPool with balance211 and each row is one dot
// product with the kernel the backend selects (see dot_kernel_name).
#include <cstddef>
#include <span>
#include <string_view>

#include "brick/core/backend.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_matrix.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::quant {

// y = W x with x.size() == cols and y.size() == rows (else InvalidArgument). Converts x into a
// per-thread scratch buffer that grows on first use of a wider x and is reused afterwards.
void matvec(const WeightMatrix& w, std::span<const float> x, std::span<float> y, ThreadPool& pool,
            Backend backend = Backend::Auto);

// The same with x already in Q8_K (xq.size() == cols / 256; W a k-quant): allocates nothing. xq's
// bsums must be the ones quantize_q8k writes (see dot_q4k_q8k; checked, InvalidArgument).
void matvec(const WeightMatrix& w, std::span<const BlockQ8K> xq, std::span<float> y, ThreadPool& pool,
            Backend backend = Backend::Auto);

// The kernel matvec and the fused ops run for rows of type `weight` on `backend` (Auto resolved as
// by brick::resolve, which may throw), e.g. "dot_q6k_q8k_avx512gfni": the best variant of the
// backend this CPU has. Throws InvalidArgument for a type Brick does not compute with.
std::string_view dot_kernel_name(TensorType weight, Backend backend = Backend::Auto);

}  // namespace brick::quant
