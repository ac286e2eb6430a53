// Q8_0·Q8_0 with AVX-512 F/BW, on the row loops of dot_rows_avx512_impl.hpp: one block per step,
// both operands widened to int16 and multiplied with vpmaddwd (16 int32 lanes per block, exact for
// every int8 value, -128 included), each block's sum scaled in float lanes by d_w * d_x with one FMA.
#include <cstddef>
#include <cstdint>

#include "brick/quant/q8_0.hpp"
#include "quant/kernels/dot_kernel_list.hpp"
#include "quant/kernels/dot_rows_avx512_impl.hpp"

namespace brick::quant::kernels {
namespace {

inline __m512 broadcast_scale(std::uint16_t d) { return _mm512_set1_ps(_cvtsh_ss(d)); }

struct Q80DotBw {
  static constexpr std::size_t kStep = 1;
  static constexpr std::size_t kVectors = 1;
  struct Activation {
    __m512i qs;  // int16
    __m512 scale;
  };
  Activation activation(const BlockQ80* x) const {
    return {_mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x->qs))), broadcast_scale(x->d)};
  }
  void accumulate(const BlockQ80* w, const Activation& a, __m512 (&acc)[1]) const {
    const __m512i wq = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w->qs)));
    acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_madd_epi16(wq, a.qs)),
                             _mm512_mul_ps(broadcast_scale(w->d), a.scale), acc[0]);
  }
  // kStep is 1: never called.
  Activation activation_tail(const BlockQ80* x, std::size_t) const { return activation(x); }
  void accumulate_tail(const BlockQ80* w, const Activation& a, __m512 (&acc)[1], std::size_t) const {
    accumulate(w, a, acc);
  }
};

}  // namespace

float dot_q8_0_q8_0_avx512(const BlockQ80* w, const BlockQ80* x, std::size_t blocks) noexcept {
  return dot_row(Q80DotBw{}, w, x, blocks);
}

void dot_q8_0_q8_0_rows_avx512(const BlockQ80* w, std::size_t rows, const BlockQ80* x, std::size_t blocks,
                             float* out) noexcept {
  dot_rows_in_four_runs(Q80DotBw{}, w, rows, x, blocks, out);
}

void dot_q8_0_q8_0_four_runs_avx512(const BlockQ80* const (&starts)[4], std::size_t count, const BlockQ80* x,
                                  std::size_t blocks, float* const (&out)[4]) noexcept {
  dot_four_runs_side_by_side(Q80DotBw{}, starts, count, x, blocks, out);
}

}  // namespace brick::quant::kernels
