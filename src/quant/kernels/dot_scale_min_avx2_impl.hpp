#pragma once
// Q4_K·Q8_K and Q5_K·Q8_K with AVX2, shared by dot_q4k_q8k_avx2.cpp and dot_q5k_q8k_avx2.cpp (and
// their AVX-VNNI twins, and the kernels of the interleaved layout): 32 quants per
// _mm256_maddubs_epi16 (unsigned 0..31 times signed Q8_K, so no saturation), the 6-bit sub-block
// scales applied with _mm256_madd_epi16 (vpdpwssd with AVX-VNNI), and the mins taken from Q8_K's
// group sums:
// sum(d*sc_j*q - dmin*m_j) . y = d * sum(sc_j * q . y) - dmin * sum(m_j * bsum_j). Both integer sums
// of a block are reduced exactly before the float scales are applied (four blocks per reduction), so
// the only rounding is one float multiply-add per sum, as in the reference. Everything here is in
// an anonymous namespace so that each translation unit keeps its own copy.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "brick/quant/kquants.hpp"
#include "brick/quant/weight_layout.hpp"
#include "core/simd_avx2.hpp"
#include "quant/kernels/dot_kquant_gemm_avx2_impl.hpp"
#include "quant/kernels/fp16_words.hpp"
#include "quant/kernels/row_lockstep.hpp"
#include "quant/kernels/weight_prefetch.hpp"

namespace brick::quant::kernels {
namespace {

// Plain Q5_K's quants have a fifth bit in qh; Q4_K's are the nibbles alone.
template <class Block>
inline constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5K>;

// The 8 scales (low 64 bits) and 8 mins (high 64 bits) of a block, one byte each. The 12 packed bytes
// hold the low 6 bits of scales 0-3 and mins 0-3 in bytes 0-7; scales and mins 4-7 keep their low
// nibbles in bytes 8-11 and their top two bits in the spare top bits of bytes 0-7. With the packed
// bytes as dwords w0, w1, w2, the result's dwords are [w0 & 0x3F.., (w2 & 0x0F..) | ((w0 >> 2) &
// 0x30..), w1 & 0x3F.., ((w2 >> 4) & 0x0F..) | ((w1 >> 2) & 0x30..)], computed in one xmm. The
// 16-byte load reads 4 bytes past the scales (qs in Q4_K, qh in Q5_K), which follow in the block.
inline __m128i unpack_scales_mins(const std::uint8_t* packed) {
  const __m128i words = _mm_loadu_si128(reinterpret_cast<const __m128i*>(packed));
  const __m128i shifted = _mm_srlv_epi32(_mm_shuffle_epi32(words, _MM_SHUFFLE(2, 1, 2, 0)), _mm_set_epi32(4, 0, 0, 0));
  const __m128i low = _mm_and_si128(shifted, _mm_set_epi32(0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F));
  const __m128i high = _mm_srli_epi32(_mm_shuffle_epi32(words, _MM_SHUFFLE(1, 1, 0, 0)), 2);
  return _mm_or_si128(low, _mm_and_si128(high, _mm_set_epi32(0x30303030, 0, 0x30303030, 0)));
}

// 32 bytes of Q4_K's nibbles, loaded once: the empty asm statement keeps them in a register, where
// GCC reads them a second time as the memory operand of the mask for the low nibbles. On Zen 3,
// alternated four times against the build before, hot and in L2 the interleaved Q4_K dot ran 1.15x
// as fast against ggml (median ratios 1.50x -> 1.81x and 1.50x -> 1.72x), the plain one 1.10x. The
// same for Q5_K's and Q6_K's packed vectors made their interleaved dots 0.9x as fast, and they keep
// the second loads.
inline __m256i load_once(const std::uint8_t* bytes) {
  __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes));
  __asm__("" : "+v"(v));
  return v;
}

// for_each_chunk() of the blocks that keep their quants as nibbles (and Q5_K's fifth bits in qh).
template <class Block, class Visit>
inline void for_each_nibble_chunk(const Block& w, Visit visit) {
  const __m256i low_nibble = _mm256_set1_epi8(0x0F);
  __m256i high = _mm256_setzero_si256();
  if constexpr (kFifthBit<Block>) high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qh));
  for (int c = 0; c < 4; ++c) {
    const __m256i packed = kFifthBit<Block> ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * c))
                                            : load_once(w.qs + 32 * c);
    __m256i q_lo = _mm256_and_si256(packed, low_nibble);
    __m256i q_hi = _mm256_and_si256(_mm256_srli_epi16(packed, 4), low_nibble);
    if constexpr (kFifthBit<Block>) {
      const __m256i fifth_bit = _mm256_set1_epi8(0x10);
      q_lo = _mm256_or_si256(q_lo, _mm256_and_si256(_mm256_slli_epi16(high, 4), fifth_bit));
      q_hi = _mm256_or_si256(q_hi, _mm256_and_si256(_mm256_slli_epi16(high, 3), fifth_bit));
      high = _mm256_srli_epi16(high, 2);
    }
    visit(c, q_lo, q_hi);
  }
}

// visit(c, q_lo, q_hi) for the four chunks c of the block (32 bytes of qs each), in address order:
// the quants unsigned, q_lo values 64c..64c+31 (the low nibbles), q_hi values 64c+32..64c+63 (the
// high nibbles), each with its fifth bit from qh for Q5_K. In the interleaved layout q_lo and q_hi
// are its vectors 2c and 2c + 1; interleaved Q5_K keeps them in the low five and top three bits of
// qs[32c ..] and bits 2c..2c + 1 of qs[128 ..] (brick/quant/weight_layout.hpp): 6 operations.
template <class Block, class Visit>
inline void for_each_chunk(const Block& w, Visit visit) {
  if constexpr (std::is_same_v<Block, BlockQ5KInterleaved>) {
    const __m256i low_bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 128));
    for (int c = 0; c < 4; ++c) {
      const __m256i packed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.qs + 32 * c));
      const __m256i q_lo = _mm256_and_si256(packed, _mm256_set1_epi8(0x1F));
      const __m256i top = _mm256_and_si256(_mm256_srli_epi16(packed, 3), _mm256_set1_epi8(0x1C));
      const __m256i low = _mm256_and_si256(_mm256_srli_epi16(low_bits, 2 * c), _mm256_set1_epi8(0x03));
      visit(c, q_lo, _mm256_or_si256(top, low));
    }
  } else {
    for_each_nibble_chunk(w, visit);
  }
}

struct BlockSums {
  __m256i scaled = _mm256_setzero_si256();  // sum_j sc_j * q . y over 8 int32 lanes
  __m256i mins = _mm256_setzero_si256();    // sum_j m_j * bsum_j over 8 int32 lanes
};

// What a block's integer sums take from its scales and mins, laid out to be loaded: dword j of
// scale_pairs is (sc_j, sc_j) as int16, the vpmaddwd operand of sub-block j, broadcast from memory
// (a load, where a shuffle in registers takes a vector port the products need); word i of mins is
// m_{i/2}, against Q8_K's 16 bsums (each min applies to two group sums of 16).
struct alignas(32) BlockScales {
  std::int32_t scale_pairs[8];
  std::int16_t mins[16];
};

inline void prepare_scales(const std::uint8_t* packed, BlockScales& out) {
  const __m128i scales_mins = unpack_scales_mins(packed);
  const __m128i pairs_0_3 = _mm_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1);
  const __m128i pairs_4_7 = _mm_setr_epi8(4, -1, 4, -1, 5, -1, 5, -1, 6, -1, 6, -1, 7, -1, 7, -1);
  const __m128i repeat_mins = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
  _mm_store_si128(reinterpret_cast<__m128i*>(out.scale_pairs), _mm_shuffle_epi8(scales_mins, pairs_0_3));
  _mm_store_si128(reinterpret_cast<__m128i*>(out.scale_pairs + 4), _mm_shuffle_epi8(scales_mins, pairs_4_7));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.mins),
                     _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, repeat_mins)));
}

template <class Block>
inline BlockSums block_sums(const Block& w, const BlockScales& scales, const BlockQ8K& x) {
  BlockSums out;
  out.mins = _mm256_madd_epi16(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales.mins)),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
  for_each_chunk(w, [&](int c, __m256i q_lo, __m256i q_hi) {
    const __m256i y_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 64 * c));
    const __m256i y_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 64 * c + 32));
    const __m256i scale_lo = _mm256_set1_epi32(scales.scale_pairs[2 * c]);
    const __m256i scale_hi = _mm256_set1_epi32(scales.scale_pairs[2 * c + 1]);
    out.scaled = add_pair_products(out.scaled, _mm256_maddubs_epi16(q_lo, y_lo), scale_lo);
    out.scaled = add_pair_products(out.scaled, _mm256_maddubs_epi16(q_hi, y_hi), scale_hi);
  });
  return out;
}

// The 8 scales (low 64 bits) and 8 mins (high 64 bits) of a block of either layout.
template <class Block>
inline __m128i scales_and_mins(const Block& w) {
  if constexpr (kInterleavedBlock<Block>) {
    static_assert(offsetof(Block, mins) == offsetof(Block, scales) + 8);
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales));
  } else {
    return unpack_scales_mins(w.scales);
  }
}

// The integer sums of an interleaved block. Every int16 lane pair of a vector holds one sub-block,
// so the products add as int16 over as many vectors as no sum can reach 2^15 (all 8 for Q4_K's
// quants of at most 15, 4 for Q5_K's 31, against activations of magnitude at most 128), and one
// multiply by the vector of the 8 scale pairs takes them into int32. The result is the plain
// kernel's: the same exact sums, in other lanes.
template <class Block>
inline BlockSums interleaved_block_sums(const Block& w, const BlockQ8KInterleaved& x) {
  constexpr int kRun = 32767 / (2 * kLargestQuant<Block> * 128);
  static_assert(kRun >= 4 && 8 % kRun == 0);
  const __m256i both = _mm256_broadcastsi128_si256(scales_and_mins(w));
  const __m256i scale_pairs = _mm256_shuffle_epi8(
      both, _mm256_setr_epi8(0, -1, 0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1, 4, -1, 4, -1, 5, -1, 5, -1, 6, -1,
                             6, -1, 7, -1, 7, -1));
  const __m256i min_pairs = _mm256_shuffle_epi8(
      both, _mm256_setr_epi8(8, -1, 8, -1, 9, -1, 9, -1, 10, -1, 10, -1, 11, -1, 11, -1, 12, -1, 12, -1, 13, -1, 13, -1,
                             14, -1, 14, -1, 15, -1, 15, -1));
  BlockSums out;
  out.mins = _mm256_madd_epi16(min_pairs, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
  __m256i run = _mm256_setzero_si256();
  for_each_chunk(w, [&](int c, __m256i q_lo, __m256i q_hi) {
    const __m256i y_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 64 * c));
    const __m256i y_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs + 64 * c + 32));
    run = _mm256_add_epi16(run, _mm256_maddubs_epi16(q_lo, y_lo));
    run = _mm256_add_epi16(run, _mm256_maddubs_epi16(q_hi, y_hi));
    if ((2 * c + 2) % kRun == 0) {
      // vpmaddwd + vpaddd even with AVX-VNNI: vpdpwssd, on the chain of one accumulator, measured
      // 0.95-0.98x as fast here.
      out.scaled = _mm256_add_epi32(out.scaled, _mm256_madd_epi16(run, scale_pairs));
      run = _mm256_setzero_si256();
    }
  });
  return out;
}

// The weight side of a block for the token-lane GEMM (dot_kquant_gemm_avx2_impl.hpp), its quants
// in value order: an interleaved block's vectors are transposed back, runs of four at a time.
template <class Block>
inline void unpack_lane_weights(const Block& w, Avx2LaneWeights& out) {
  if constexpr (kInterleavedBlock<Block>) {
    __m256i v[8];
    for_each_chunk(w, [&](int c, __m256i q_lo, __m256i q_hi) {
      v[2 * c] = q_lo;
      v[2 * c + 1] = q_hi;
    });
    store_in_value_order(v, out.q);
  } else {
    for_each_chunk(w, [&](int c, __m256i q_lo, __m256i q_hi) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(out.q + 64 * c), q_lo);
      _mm256_store_si256(reinterpret_cast<__m256i*>(out.q + 64 * c + 32), q_hi);
    });
  }
  const __m128i scales_mins = scales_and_mins(w);
  const __m256i scales = _mm256_cvtepu8_epi32(scales_mins);
  _mm256_store_si256(reinterpret_cast<__m256i*>(out.scales), lane_scale_operands(scales));
  _mm_store_si128(reinterpret_cast<__m128i*>(out.pairs), _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8)));
  out.d = _cvtsh_ss(w.d);
  out.dmin = _cvtsh_ss(w.dmin);
}

template <class Block>
inline void gemm_scale_min_q8k(const Block* w, std::size_t rows, const Q8KBlockFor<Block>* x, std::size_t tokens,
                               std::size_t blocks, float* out, std::size_t out_stride) {
  dot_tokens_in_lanes_avx2(w, rows, x, tokens, blocks, out, out_stride,
                                 [](const Block& block, Avx2LaneWeights& weights) { unpack_lane_weights(block, weights); });
}

// [scaled sums of blocks 0-3 | min sums of blocks 0-3], exact.
inline __m256i lane_sums(const BlockSums (&s)[4]) {
  const __m256i scaled = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0].scaled, s[1].scaled),
                                           _mm256_hadd_epi32(s[2].scaled, s[3].scaled));
  const __m256i mins = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0].mins, s[1].mins),
                                         _mm256_hadd_epi32(s[2].mins, s[3].mins));
  return _mm256_add_epi32(_mm256_permute2x128_si256(scaled, mins, 0x20),
                          _mm256_permute2x128_si256(scaled, mins, 0x31));
}

// [d * x.d of blocks 0-3 | -(dmin * x.d) of blocks 0-3] for four whole blocks, built in registers
// (the same float products as one block at a time).
template <class Block>
inline __m256 four_block_scales(const Block* w, const Q8KBlockFor<Block>* x) {
  const __m128 dx = _mm_setr_ps(x[0].d, x[1].d, x[2].d, x[3].d);
  const __m128 d = fp16_words_as_floats(w[0].d, w[1].d, w[2].d, w[3].d);
  const __m128 dmin = fp16_words_as_floats(w[0].dmin, w[1].dmin, w[2].dmin, w[3].dmin);
  const __m128 minus_mins = _mm_xor_ps(_mm_mul_ps(dmin, dx), _mm_set1_ps(-0.0f));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_mul_ps(d, dx)), minus_mins, 1);
}

// The sums of plain blocks. The scales of each group of four blocks are prepared one group ahead,
// into the buffer the group before used: stored in one iteration and loaded in the next, they stay
// in memory (prepared and used in one iteration, the compiler forwards the stores into shuffles).
template <class Block>
struct PlainSums {
  const Block* w;
  const BlockQ8K* x;
  std::size_t blocks;
  BlockScales buffers[2][4];
  std::size_t now = 0;  // buffers[now]: this group's scales

  PlainSums(const Block* weights, const BlockQ8K* activations, std::size_t count)
      : w(weights), x(activations), blocks(count) {
    for (std::size_t i = 0; i < 4 && i < blocks; ++i) prepare_scales(w[i].scales, buffers[0][i]);
  }
  void group(std::size_t b, BlockSums (&out)[4]) {
    const BlockScales* scales = buffers[now];
    out[0] = block_sums(w[b], scales[0], x[b]);
    out[1] = block_sums(w[b + 1], scales[1], x[b + 1]);
    out[2] = block_sums(w[b + 2], scales[2], x[b + 2]);
    out[3] = block_sums(w[b + 3], scales[3], x[b + 3]);
    BlockScales* next = buffers[now ^ 1];
    for (std::size_t i = 0; i < 4 && b + 4 + i < blocks; ++i) prepare_scales(w[b + 4 + i].scales, next[i]);
    now ^= 1;
  }
  BlockSums one(std::size_t b) const { return block_sums(w[b], buffers[now][b % 4], x[b]); }
};

// The sums of interleaved blocks, whose scales are loaded as they are stored.
template <class Block>
struct InterleavedSums {
  const Block* w;
  const BlockQ8KInterleaved* x;

  void group(std::size_t b, BlockSums (&out)[4]) const {
    out[0] = interleaved_block_sums(w[b], x[b]);
    out[1] = interleaved_block_sums(w[b + 1], x[b + 1]);
    out[2] = interleaved_block_sums(w[b + 2], x[b + 2]);
    out[3] = interleaved_block_sums(w[b + 3], x[b + 3]);
  }
  BlockSums one(std::size_t b) const { return interleaved_block_sums(w[b], x[b]); }
};

// A row of the row kernel (row_lockstep.hpp): whole groups of four blocks, whose sums come from
// sums.group(b, out[4]) (no loop over the group, so that its sums and scales stay in registers),
// then the last blocks one at a time from sums.one(b), their float scales as four_block_scales()
// computes them. Plain blocks against Q8_K and interleaved blocks against interleaved Q8_K give the
// same bits on the same values.
template <class Block>
class ScaleMinRow {
 public:
  ScaleMinRow(const Block* w, const Q8KBlockFor<Block>* x, std::size_t blocks)
      : w_(w), x_(x), blocks_(blocks), sums_(make_sums(w, x, blocks)) {}

  using Acc = __m256;

  Acc group(std::size_t b, Acc acc) {
    prefetch_weights_ahead<4 * sizeof(Block)>(w_ + b);
    BlockSums group[4];
    sums_.group(b, group);
    return _mm256_fmadd_ps(four_block_scales(w_ + b, x_ + b), _mm256_cvtepi32_ps(lane_sums(group)), acc);
  }

  float finish(std::size_t b, Acc acc) {
    if (b < blocks_) {
      BlockSums group[4];
      alignas(32) float scales[8] = {};  // d of blocks 0-3, then -dmin; zeros past the last block
      for (std::size_t i = 0; b + i < blocks_; ++i) {
        group[i] = sums_.one(b + i);
        scales[i] = _cvtsh_ss(w_[b + i].d) * x_[b + i].d;
        scales[4 + i] = -(_cvtsh_ss(w_[b + i].dmin) * x_[b + i].d);
      }
      acc = _mm256_fmadd_ps(_mm256_load_ps(scales), _mm256_cvtepi32_ps(lane_sums(group)), acc);
    }
    return simd::horizontal_sum(acc);
  }

 private:
  using Sums = std::conditional_t<kInterleavedBlock<Block>, InterleavedSums<Block>, PlainSums<Block>>;
  static Sums make_sums(const Block* w, const Q8KBlockFor<Block>* x, std::size_t blocks) {
    if constexpr (kInterleavedBlock<Block>) {
      return Sums{w, x};
    } else {
      return Sums(w, x, blocks);
    }
  }

  const Block* w_;
  const Q8KBlockFor<Block>* x_;
  std::size_t blocks_;
  Sums sums_;
};

template <class Block>
inline float dot_scale_min_q8k(const Block* w, const Q8KBlockFor<Block>* x, std::size_t blocks) {
  return walk_row<ScaleMinRow<Block>>(w, x, blocks);
}

template <class Block>
inline void four_runs_scale_min_q8k(const Block* const (&starts)[4], std::size_t count, const Q8KBlockFor<Block>* x,
                                    std::size_t blocks, float* const (&out)[4]) {
  four_runs_in_lockstep<ScaleMinRow<Block>>(starts, count, x, blocks, out);
}

}  // namespace
}  // namespace brick::quant::kernels
