#pragma once
// The float-op kernels as plain functions over raw pointers, one family per file
// (src/ops/kernels/<family>_f32_<isa>.cpp), so the per-ISA translation units stay free of library
// templates. The public functions validate sizes before any kernel runs; kernels never allocate or
// throw. The Scalar kernels are the reference every other backend is tested against.
#include <cstddef>

namespace brick::ops::kernels {

// Dot product: sum of a[i] * b[i]. Scalar accumulates in double.
float dot_f32_scalar(const float* a, const float* b, std::size_t n) noexcept;
float dot_f32_avx2(const float* a, const float* b, std::size_t n) noexcept;
float dot_f32_avx512(const float* a, const float* b, std::size_t n) noexcept;

// y[i] += alpha * x[i].
void axpy_f32_scalar(float alpha, const float* x, float* y, std::size_t n) noexcept;
void axpy_f32_avx2(float alpha, const float* x, float* y, std::size_t n) noexcept;
void axpy_f32_avx512(float alpha, const float* x, float* y, std::size_t n) noexcept;

// out[i] = a[i] + b[i].
void add_f32_scalar(const float* a, const float* b, float* out, std::size_t n) noexcept;
void add_f32_avx2(const float* a, const float* b, float* out, std::size_t n) noexcept;
void add_f32_avx512(const float* a, const float* b, float* out, std::size_t n) noexcept;

// rms_norm's two passes: the sum of x[i] * x[i] (each square rounded to float, the sum kept in
// double), then out[i] = (x[i] * scale) * w[i].
double sum_squares_f32_scalar(const float* x, std::size_t n) noexcept;
void scale_mul_f32_scalar(const float* x, float scale, const float* w, float* out,
                          std::size_t n) noexcept;
double sum_squares_f32_avx2(const float* x, std::size_t n) noexcept;
void scale_mul_f32_avx2(const float* x, float scale, const float* w, float* out,
                        std::size_t n) noexcept;
double sum_squares_f32_avx512(const float* x, std::size_t n) noexcept;
void scale_mul_f32_avx512(const float* x, float scale, const float* w, float* out,
                          std::size_t n) noexcept;

// softmax's three passes: the largest non-NaN value (-inf when there is none; n > 0), then
// out[i] = exp(x[i] - shift) returning their sum in double, then x[i] *= scale.
float max_f32_scalar(const float* x, std::size_t n) noexcept;
double exp_shifted_f32_scalar(const float* x, float shift, float* out, std::size_t n) noexcept;
void scale_f32_scalar(float* x, float scale, std::size_t n) noexcept;
float max_f32_avx2(const float* x, std::size_t n) noexcept;
double exp_shifted_f32_avx2(const float* x, float shift, float* out, std::size_t n) noexcept;
void scale_f32_avx2(float* x, float scale, std::size_t n) noexcept;
float max_f32_avx512(const float* x, std::size_t n) noexcept;
double exp_shifted_f32_avx512(const float* x, float shift, float* out, std::size_t n) noexcept;
void scale_f32_avx512(float* x, float scale, std::size_t n) noexcept;

// out[i] = x[i] / (1 + exp(-x[i])), and swiglu's silu(gate[i]) * up[i].
void silu_f32_scalar(const float* x, float* out, std::size_t n) noexcept;
void swiglu_f32_scalar(const float* gate, const float* up, float* out, std::size_t n) noexcept;
void silu_f32_avx2(const float* x, float* out, std::size_t n) noexcept;
void swiglu_f32_avx2(const float* gate, const float* up, float* out, std::size_t n) noexcept;
void silu_f32_avx512(const float* x, float* out, std::size_t n) noexcept;
void swiglu_f32_avx512(const float* gate, const float* up, float* out, std::size_t n) noexcept;

// Rotates pairs first_pair .. first_pair + n_pairs - 1 of every head of x (n_heads * head_dim
// floats) into out, pair first_pair + k by the angle whose cosine and sine are cos[k] and sin[k].
// norm pairs (2i, 2i+1), neox pairs (i, i + head_dim/2).
void rope_norm_f32_scalar(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept;
void rope_neox_f32_scalar(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept;
void rope_norm_f32_avx2(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                        const float* cos, const float* sin, std::size_t first_pair,
                        std::size_t n_pairs) noexcept;
void rope_neox_f32_avx2(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                        const float* cos, const float* sin, std::size_t first_pair,
                        std::size_t n_pairs) noexcept;
void rope_norm_f32_avx512(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept;
void rope_neox_f32_avx512(const float* x, float* out, std::size_t n_heads, std::size_t head_dim,
                          const float* cos, const float* sin, std::size_t first_pair,
                          std::size_t n_pairs) noexcept;

// y[r] = dot(row r of the row-major rows x cols matrix w, x).
void matvec_f32_scalar(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept;
void matvec_f32_avx2(const float* w, std::size_t rows, std::size_t cols, const float* x,
                     float* y) noexcept;
void matvec_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x,
                       float* y) noexcept;

// y[i * cols + c] = sum over r of x[i * rows + r] * w[r * cols + c] for i < count, c < cols (w^T x
// for each of count rows of x): each y value accumulates the rows in order, r = 0 first.
void matvec_transposed_f32_scalar(const float* w, std::size_t rows, std::size_t cols, const float* x, std::size_t count,
                                  float* y) noexcept;
void matvec_transposed_f32_avx2(const float* w, std::size_t rows, std::size_t cols, const float* x, std::size_t count,
                                float* y) noexcept;
void matvec_transposed_f32_avx512(const float* w, std::size_t rows, std::size_t cols, const float* x, std::size_t count,
                                  float* y) noexcept;

}  // namespace brick::ops::kernels
