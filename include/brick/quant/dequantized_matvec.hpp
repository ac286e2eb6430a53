#pragma once
// y = dequantize(W) x in double precision, each output rounded to float once: the f32 reference a
// quantized projection is measured against (the quantization error of W and of x's conversion to
// the activation format together). Row by row, each dequantized into a per-slot scratch row, the
// rows split over a ThreadPool; nothing is cached, so a call reads all of W.
#include <span>

#include "brick/quant/weight_matrix.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::quant {

// x.size() == cols and y.size() == rows, else InvalidArgument.
void dequantized_matvec(const WeightMatrix& w, std::span<const float> x, std::span<float> y,
                        ThreadPool& pool);

}  // namespace brick::quant
