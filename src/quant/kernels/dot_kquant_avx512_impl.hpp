#pragma once
// The AVX-512 Q4_K·Q8_K, Q5_K·Q8_K and Q6_K·Q8_K kernels, shared by the translation units
// dot_*_avx512.cpp (AVX-512 F/BW: vpmaddubsw pairs, scaled with vpmaddwd + vpaddd),
// dot_*_avx512vnni.cpp (vpdpbusd sums of four, packed to int16 and scaled with vpdpwssd, see
// packed_dots) and dot_*_avx512gfni.cpp (VNNI, with GFNI moving the high quant bits). Everything
// here is in an anonymous namespace so that each TU keeps its own copy, compiled with its own flags.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "brick/quant/kquants.hpp"
#include "core/simd_avx512.hpp"
#include "quant/kernels/weight_prefetch.hpp"
#include "quant/lockstep.hpp"
#include "quant/row_walk.hpp"

namespace brick::quant::kernels {
namespace {

// What the including translation unit was compiled for.
enum class Avx512Level { Bw, Vnni, VnniGfni };

// acc + (products * scales), pairs of int16 summed into int32 lanes.
inline __m512i accumulate_scaled(__m512i acc, __m512i products, __m512i scales) {
  return _mm512_add_epi32(acc, _mm512_madd_epi16(products, scales));
}

inline float horizontal_sum(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// The Q8_K side of one block in registers. The multi-row kernels load it once and multiply it with
// the same block of four rows instead of once per row.
struct ActivationBlock {
  __m512i qs[4];
  __m256i bsums;
  explicit ActivationBlock(const BlockQ8K& x)
      : qs{_mm512_loadu_si512(x.qs), _mm512_loadu_si512(x.qs + 64), _mm512_loadu_si512(x.qs + 128),
           _mm512_loadu_si512(x.qs + 192)},
        bsums(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums))) {}
};

// One row: dot.group(w4, x4, acc) -> acc for every four blocks, each block's weighted total in the
// lane of its position in the group, and acc + dot.tail(w, x) in lane 0 for each of the last one to
// three. Whole groups let the four blocks' sums stay in registers, be reduced to per-block totals
// together and have their scales gathered with vector loads.
// With kPrefetch the row prefetches its weights ahead (weight_prefetch.hpp), for rows walked one
// after another.
// Always inlined, as are the Dots' group(): called, the row read the Dot's constants from memory,
// and once the walk had a prefetching twin GCC called group() out of line in the Q4_K and Q5_K row
// kernels (0.88-0.91x as fast hot on Zen 5) and in the plain AVX-512 Q6_K one.
template <bool kPrefetch = false, class Block, class Dot>
[[gnu::always_inline]] inline float dot_one_row(const Dot& dot, const Block* w, const BlockQ8K* x,
                                                std::size_t blocks) {
  __m128 acc = _mm_setzero_ps();
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    if constexpr (kPrefetch) prefetch_weights_ahead<4 * sizeof(Block)>(w + b);
    acc = dot.group(w + b, x + b, acc);
  }
  for (; b < blocks; ++b) acc = _mm_add_ss(acc, _mm_set_ss(dot.tail(w[b], x[b])));
  return horizontal_sum(acc);
}

// Four blocks handled together: four consecutive blocks of one row, or one block of four rows.
template <class Block>
struct FourBlocks {
  const Block* blocks[4];
  static FourBlocks consecutive(const Block* w) { return {{w, w + 1, w + 2, w + 3}}; }
  static FourBlocks of_rows(const Block* const (&rows)[4], std::size_t b) {
    return {{rows[0] + b, rows[1] + b, rows[2] + b, rows[3] + b}};
  }
  const Block& operator[](std::size_t i) const { return *blocks[i]; }
};

// Four rows at once, wherever each lies: dot.across_rows(FourBlocks, x, acc) -> acc adds block b of
// the four rows to lane r of acc[b % 4], and dot.tails(FourBlocks, x) gives lane r the value
// dot.tail would give row r's block. Every row's float operations are those of dot_one_row in the
// same order (lane j of its accumulator there is acc[j] here, the tail goes to lane 0, the final sum
// is (acc0 + acc2) + (acc1 + acc3)), so the results are the same bits; the integer block totals are
// exact in any order.
template <class Block, class Dot>
inline void dot_four_rows(const Dot& dot, const Block* const (&rows)[4], const BlockQ8K* x, std::size_t blocks,
                          float* const (&out)[4]) {
  __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
  std::size_t b = 0;
  for (; b + 4 <= blocks; b += 4) {
    for (std::size_t j = 0; j < 4; ++j) {
      acc[j] = dot.across_rows(FourBlocks<Block>::of_rows(rows, b + j), x[b + j], acc[j]);
    }
  }
  for (; b < blocks; ++b) {
    const __m128 tails = dot.tails(FourBlocks<Block>::of_rows(rows, b), x[b]);
    acc[0] = _mm_add_ps(acc[0], tails);
  }
  const __m128 sums = _mm_add_ps(_mm_add_ps(acc[0], acc[2]), _mm_add_ps(acc[1], acc[3]));
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, sums);
  for (std::size_t r = 0; r < 4; ++r) *out[r] = lanes[r];
}

// Four runs of `count` consecutive rows, wherever each starts, walked side by side: out[r][i] gets
// row i of run r. One call sets up the kernel's constants for all of them.
template <class Block, class Dot>
[[gnu::always_inline]] inline void dot_four_runs_here(const Dot& dot, const Block* const (&starts)[4],
                                                      std::size_t count, const BlockQ8K* x, std::size_t blocks,
                                                      float* const (&out)[4]) {
  for (std::size_t i = 0; i < count; ++i) {
    const Block* const four[4] = {starts[0] + i * blocks, starts[1] + i * blocks, starts[2] + i * blocks,
                                  starts[3] + i * blocks};
    float* const outs[4] = {out[0] + i, out[1] + i, out[2] + i, out[3] + i};
    dot_four_rows(dot, four, x, blocks, outs);
  }
}

template <class Block, class Dot>
[[gnu::noinline]] void dot_four_runs_called(const Dot& dot, const Block* const (&starts)[4], std::size_t count,
                                            const BlockQ8K* x, std::size_t blocks, float* const (&out)[4]) {
  dot_four_runs_here(dot, starts, count, x, blocks, out);
}

// Inlined or called as Dot::kRunsOutOfLine says, whichever is faster per format: called, the Q5_K
// loop takes its constants from the Dot object in memory and spills less; inlined, the Q6_K loop
// keeps them in registers.
template <class Block, class Dot>
[[gnu::always_inline]] inline void dot_four_runs(const Dot& dot, const Block* const (&starts)[4], std::size_t count,
                                                 const BlockQ8K* x, std::size_t blocks, float* const (&out)[4]) {
  if constexpr (Dot::kRunsOutOfLine) {
    dot_four_runs_called(dot, starts, count, x, blocks, out);
  } else {
    dot_four_runs_here(dot, starts, count, x, blocks, out);
  }
}

// The rows of a matrix lie end to end, so walking them in order without software prefetch is one
// sequential stream, which keeps too few cache misses in flight to draw the read bandwidth from
// DRAM. The rows are split into four runs of an odd number of rows (see lockstep.hpp) walked side
// by side, one stream each (on the Zen 4 development machine four streams beat two and one, eight
// ran at half the speed of four; adjacent rows in lockstep zigzag within what is still one stream
// and ran 2.5x slower); the rows past the four runs follow one at a time.
template <class Block, class Dot>
inline void dot_rows_in_lockstep(const Dot& dot, const Block* w, std::size_t rows, const BlockQ8K* x,
                                 std::size_t blocks, float* out) {
  detail::in_four_runs(
      w, rows, blocks, out,
      [&](const Block* const(&starts)[4], std::size_t run, float* const(&outs)[4]) {
        dot_four_runs(dot, starts, run, x, blocks, outs);
      },
      [&](const Block* row) { return dot_one_row(dot, row, x, blocks); });
}

// The rows kernel: walks_in_four_runs()'s walk (quant/row_walk.hpp), unpinned in lockstep for rows
// under kFourRunsMinBytes. In lockstep (FourRuns), or one row after another, each prefetching its
// weights 8 KiB ahead: on Zen 5 that decoded a 1.83 GB Q4_K_M model 1.06-1.14x as fast at 1 thread
// and 1.13-1.18x at 2 (its rows of 2048 and 5632 values), and the 14336x4096 mat-vecs took
// 0.85-0.99x the time at 1 thread, mixed at 2 (bench/RESULTS.md).
template <class Block, class Dot>
inline void dot_rows_by_walk(const Dot& dot, const Block* w, std::size_t rows, const BlockQ8K* x, std::size_t blocks,
                             float* out) {
  if (detail::walks_in_four_runs(rows * blocks * sizeof(Block), detail::RowWalk::FourRuns)) {
    dot_rows_in_lockstep(dot, w, rows, x, blocks, out);
    return;
  }
  for (std::size_t r = 0; r < rows; ++r) out[r] = dot_one_row<true>(dot, w + r * blocks, x, blocks);
}

// The GEMM's micro-kernel: out[t * out_stride + r] = row r . x_t for `rows` rows of `blocks` blocks
// laid end to end from w and `tokens` activations laid end to end from x. Each group of four
// blocks of a row is unpacked once (dot.unpack_group) and paired with up to kGemmTokens tokens
// (dot.group): the unpacking, the weight loads and the scale arrangement are shared, and each
// (row, token) gets dot_one_row's float operations in the same order, so the mat-vec's bits.
inline constexpr std::size_t kGemmTokens = 8;

template <class Block, class Dot>
inline void dot_tokens(const Dot& dot, const Block* w, std::size_t rows, const BlockQ8K* x, std::size_t tokens,
                       std::size_t blocks, float* out, std::size_t out_stride) {
  for (std::size_t first = 0; first < tokens; first += kGemmTokens) {
    const std::size_t n = tokens - first < kGemmTokens ? tokens - first : kGemmTokens;
    const BlockQ8K* const xs = x + first * blocks;
    for (std::size_t r = 0; r < rows; ++r) {
      const Block* const row = w + r * blocks;
      __m128 acc[kGemmTokens];
      for (std::size_t i = 0; i < n; ++i) acc[i] = _mm_setzero_ps();
      std::size_t b = 0;
      for (; b + 4 <= blocks; b += 4) {
        const auto group = dot.unpack_group(row + b);
        for (std::size_t i = 0; i < n; ++i) acc[i] = dot.group(group, xs + i * blocks + b, acc[i]);
      }
      for (; b < blocks; ++b) {
        for (std::size_t i = 0; i < n; ++i) acc[i] = _mm_add_ss(acc[i], _mm_set_ss(dot.tail(row[b], xs[i * blocks + b])));
      }
      for (std::size_t i = 0; i < n; ++i) out[(first + i) * out_stride + r] = horizontal_sum(acc[i]);
    }
  }
}

inline float fp16_scalar(std::uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }

inline __m128 activation_scales(const BlockQ8K* x4) { return _mm_set_ps(x4[3].d, x4[2].d, x4[1].d, x4[0].d); }

inline int load_dword(const void* p) {
  int dword;
  std::memcpy(&dword, p, sizeof dword);
  return dword;
}

// Per 128-bit lane, [sum of that lane of v0, ... of v3]: the first step of reducing four blocks'
// integer sums at once, exactly.
inline __m512i lane_sums(__m512i v0, __m512i v1, __m512i v2, __m512i v3) {
  const __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(v0, v1), _mm512_unpackhi_epi32(v0, v1));
  const __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(v2, v3), _mm512_unpackhi_epi32(v2, v3));
  return _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
}

// 32 int16 lanes, lane p holding index(p): the vpermw controls that place sub-block scales.
template <class IndexOf>
inline __m512i int16_index(IndexOf index_of) {
  alignas(64) std::int16_t index[32];
  for (int lane = 0; lane < 32; ++lane) index[lane] = static_cast<std::int16_t>(index_of(lane));
  return _mm512_load_si512(index);
}

// Without VNNI, sub-block scales (int16) are spread over the lanes of maddubs' output with one
// cross-lane vpermw per block and a cheap in-lane vpshufb per vector: the vpermw puts in 128-bit
// lane i the four scales that lane i needs for vectors 0..3, and vector k's vpshufb then repeats
// element k across its lane. `scale_of(k, lane128)` names the sub-block whose scale vector k needs
// in that lane.
template <class ScaleOf>
inline __m512i arrange_scales_index(ScaleOf scale_of) {
  return int16_index([&](int lane) { return scale_of(lane % 4, lane / 8); });
}

// With VNNI, vpdpbusd sums four u8*s8 products per int32 lane (|sum| <= 4 * 63 * 128 < 2^15), so
// two such vectors pack losslessly (vpackssdw, in-lane) into one vector of int16 partial sums,
// which one vpdpwssd multiplies by the scales and accumulates. Per 128 values that is 2 vpdpbusd +
// 1 pack + 1 vpdpwssd instead of 2 vpmaddubsw + 2 vpshufb + 2 vpdpwssd. After the pack, int16 lane
// p of 128-bit lane p / 8 comes from the first vector when p % 8 < 4, else from the second.
// `sub_block_of(first_or_second, lane128)` names the sub-block such a lane belongs to.
template <class SubBlockOf>
inline __m512i packed_scales_index(SubBlockOf sub_block_of) {
  return int16_index([&](int lane) { return sub_block_of((lane % 8) / 4, lane / 8); });
}

// A template so that the AVX-512 F/BW translation unit, which never instantiates it, compiles.
template <Avx512Level kLevel>
inline __m512i packed_dots(__m512i q0, __m512i y0, __m512i q1, __m512i y1) {
  static_assert(kLevel != Avx512Level::Bw);
  const __m512i zero = _mm512_setzero_si512();
  return _mm512_packs_epi32(_mm512_dpbusd_epi32(zero, q0, y0), _mm512_dpbusd_epi32(zero, q1, y1));
}

inline __m512i pick_scale(int k) { return _mm512_set1_epi16(static_cast<short>((2 * k + 1) << 8 | 2 * k)); }

// gf2p8affineqb matrices copy bits of each byte to other positions and clear the rest: row i
// (byte 7 - i) of a matrix names the source bits of result bit i. bit_move(from, to) is the matrix
// of one move; or them to move several bits. One matrix per 64-bit lane lets the two 256-bit
// halves of a zmm move different bits.
constexpr std::uint64_t bit_move(int from, int to) { return std::uint64_t{1} << from << 8 * (7 - to); }

inline __m512i per_half_matrices(std::uint64_t low, std::uint64_t high) {
  return _mm512_inserti64x4(_mm512_set1_epi64(static_cast<long long>(low)),
                            _mm256_set1_epi64x(static_cast<long long>(high)), 1);
}

// The GFNI-only statements below sit in templates that the other translation units never
// instantiate, so they compile without -mgfni.
template <Avx512Level kLevel>
inline __m512i move_bits(__m512i bytes, __m512i matrices) {
  static_assert(kLevel == Avx512Level::VnniGfni);
  return _mm512_gf2p8affine_epi64_epi8(bytes, matrices, 0);
}

// A 32-byte load repeated into both 256-bit halves of a zmm.
inline __m512i load_twice(const std::uint8_t* p) {
  return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// Q6_K: 64 quants per zmm. A half-block (128 values) is 64 bytes of ql and 32 of qh; the low
// nibbles of ql are values 0..63 (qh bits 0-1 for the first 32, bits 2-3 for the next), the high
// nibbles values 64..127 (qh bits 4-5, then 6-7). qh is loaded into both 256-bit halves, masked to
// bits 0-1 and 4-5 in the low half and 2-3 and 6-7 in the high half, then shifted by a different
// amount in each half so that the wanted pair lands on bits 4-5 with zeros above it. Whatever lands
// in bits 0-3 is discarded by the final merge, which takes bits 0-3 from ql and 4-7 from qh.
// The quants are used unsigned (0..63) and 32 * sum(sc_j * bsum_j) is removed once per block.
struct Q6KConstants {
  __m512i low_nibble = _mm512_set1_epi8(0x0F);
  __m512i qh_pairs = _mm512_inserti64x4(_mm512_set1_epi8(0x33), _mm256_set1_epi8(static_cast<char>(0xCC)), 1);
  __m512i shift_low_values = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
  __m512i shift_high_values = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  // Vector k covers sub-blocks 4k..4k+3, one per 128-bit lane.
  __m512i arrange = arrange_scales_index([](int k, int lane128) { return 4 * k + lane128; });
  __m512i pick[4] = {pick_scale(0), pick_scale(1), pick_scale(2), pick_scale(3)};
  // With GFNI, the two high bits of every quant move straight to bits 4-5 with the rest cleared:
  // values 0..63 of a half take qh bits 0-1 (low 256 bits) and 2-3 (high), values 64..127 bits 4-5
  // and 6-7.
  __m512i qh_to_low_values = per_half_matrices(bit_move(0, 4) | bit_move(1, 5), bit_move(2, 4) | bit_move(3, 5));
  __m512i qh_to_high_values = per_half_matrices(bit_move(4, 4) | bit_move(5, 5), bit_move(6, 4) | bit_move(7, 5));
  // Packed vectors 0+1 and 2+3.
  __m512i packed_arrange[2] = {packed_scales_index([](int v, int lane128) { return 4 * v + lane128; }),
                               packed_scales_index([](int v, int lane128) { return 8 + 4 * v + lane128; })};
};

// (a & 0x0F) | (b & 0xF0) with c = 0x0F in every byte. vpternlogd overwrites its first operand, so b
// (the high bits, used once) goes first: with a first, GCC copied each nibble vector that is also
// shifted, one more instruction per vector.
inline __m512i merge_nibbles(__m512i a, __m512i b, __m512i low_nibble) {
  return _mm512_ternarylogic_epi32(b, a, low_nibble, 0xD8);  // c ? a : b, bit by bit
}

// The weight side of one Q6_K block, unpacked: its unsigned quants and scales as block_sum pairs
// them with an activation. The GEMM unpacks a block once for all its tokens.
struct Q6KUnpacked {
  __m512i q[4];
  __m512i scales[2];  // with VNNI the packed-arranged scales of vectors 0+1 and 2+3, else [0] arranged
  __m256i offset_scales;  // -32 * sc_j as int16
};

template <Avx512Level kLevel>
inline Q6KUnpacked unpack(const BlockQ6K& w, const Q6KConstants& k) {
  Q6KUnpacked u;
  // The quants first and the scales (at the end of the block) last: a block is read in address
  // order, which keeps the hardware prefetchers streaming when the weights come from DRAM.
  for (int half = 0; half < 2; ++half) {
    // One 64-byte load, across two cache lines nearly always (blocks are 210 bytes). Two 32-byte
    // loads and an insert ran no faster from DRAM and slower from cache since the multi-row kernels
    // share the activation loads. The empty asm statement keeps ql in a register: otherwise GCC
    // reads the 64 bytes a second time as the memory operand of the shift, and line-crossing loads
    // are the resource this kernel runs out of first.
    __m512i ql = _mm512_loadu_si512(w.ql + 64 * half);
    __asm__("" : "+v"(ql));
    __m512i high_bits[2];
    if constexpr (kLevel == Avx512Level::VnniGfni) {
      const __m512i qh = load_twice(w.qh + 32 * half);
      high_bits[0] = move_bits<kLevel>(qh, k.qh_to_low_values);
      high_bits[1] = move_bits<kLevel>(qh, k.qh_to_high_values);
    } else {
      const __m512i qh = _mm512_and_si512(load_twice(w.qh + 32 * half), k.qh_pairs);
      high_bits[0] = _mm512_sllv_epi16(qh, k.shift_low_values);
      high_bits[1] = _mm512_srlv_epi16(qh, k.shift_high_values);
    }
    u.q[2 * half] = merge_nibbles(ql, high_bits[0], k.low_nibble);
    u.q[2 * half + 1] = merge_nibbles(_mm512_srli_epi16(ql, 4), high_bits[1], k.low_nibble);
  }
  const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w.scales)));
  u.offset_scales = _mm256_mullo_epi16(scales16, _mm256_set1_epi16(-32));
  if constexpr (kLevel != Avx512Level::Bw) {
    for (int pair = 0; pair < 2; ++pair) {
      u.scales[pair] = _mm512_permutexvar_epi16(k.packed_arrange[pair], _mm512_castsi256_si512(scales16));
    }
  } else {
    u.scales[0] = _mm512_permutexvar_epi16(k.arrange, _mm512_castsi256_si512(scales16));
    u.scales[1] = u.scales[0];
  }
  return u;
}

// The block's integer sum sum_j sc_j * (q - 32) . y, spread over 16 int32 lanes.
template <Avx512Level kLevel>
inline __m512i block_sum(const Q6KUnpacked& u, const ActivationBlock& y, const Q6KConstants& k) {
  // -32 * sum_j sc_j * bsum_j, in int32 lanes 0-7.
  const __m512i offset = _mm512_zextsi256_si512(_mm256_madd_epi16(u.offset_scales, y.bsums));
  if constexpr (kLevel != Avx512Level::Bw) {
    const __m512i first =
        _mm512_dpwssd_epi32(offset, packed_dots<kLevel>(u.q[0], y.qs[0], u.q[1], y.qs[1]), u.scales[0]);
    return _mm512_dpwssd_epi32(first, packed_dots<kLevel>(u.q[2], y.qs[2], u.q[3], y.qs[3]), u.scales[1]);
  } else {
    // Two accumulators: the chain of dependent vpmaddwd + vpaddd is half as long.
    __m512i sums[2] = {offset, _mm512_setzero_si512()};
    for (int v = 0; v < 4; ++v) {
      sums[v % 2] = accumulate_scaled(sums[v % 2], _mm512_maddubs_epi16(u.q[v], y.qs[v]),
                                      _mm512_shuffle_epi8(u.scales[0], k.pick[v]));
    }
    return _mm512_add_epi32(sums[0], sums[1]);
  }
}

template <Avx512Level kLevel>
inline __m512i block_sum(const BlockQ6K& w, const ActivationBlock& y, const Q6KConstants& k) {
  return block_sum<kLevel>(unpack<kLevel>(w, k), y, k);
}

// The four blocks' totals of four 16-lane integer sums, exactly.
inline __m128i block_totals(__m512i sum0, __m512i sum1, __m512i sum2, __m512i sum3) {
  const __m512i lanes = lane_sums(sum0, sum1, sum2, sum3);
  const __m256i halves = _mm256_add_epi32(_mm512_castsi512_si256(lanes), _mm512_extracti64x4_epi64(lanes, 1));
  return _mm_add_epi32(_mm256_castsi256_si128(halves), _mm256_extracti128_si256(halves, 1));
}

// The fp16 d of the four blocks as floats.
inline __m128 q6k_scales(const FourBlocks<BlockQ6K>& w) {
  __m128i d = _mm_cvtsi32_si128(w[0].d);
  d = _mm_insert_epi16(d, w[1].d, 1);
  d = _mm_insert_epi16(d, w[2].d, 2);
  d = _mm_insert_epi16(d, w[3].d, 3);
  return _mm_cvtph_ps(d);
}

template <Avx512Level kLevel>
struct Q6KDot {
  static constexpr bool kRunsOutOfLine = false;  // see dot_four_runs
  Q6KConstants k;

  // Four blocks of one row. Always inlined (see dot_one_row).
  [[gnu::always_inline]] __m128 group(const BlockQ6K* w4, const BlockQ8K* x4, __m128 acc) const {
    // One statement per block: as arguments of one call they would be evaluated in an unspecified
    // order (GCC: last first), and reading the blocks backwards defeats the hardware prefetchers
    // when the weights stream from DRAM (the mat-vec ran 2.5x slower).
    const __m512i sum0 = block_sum<kLevel>(w4[0], ActivationBlock(x4[0]), k);
    const __m512i sum1 = block_sum<kLevel>(w4[1], ActivationBlock(x4[1]), k);
    const __m512i sum2 = block_sum<kLevel>(w4[2], ActivationBlock(x4[2]), k);
    const __m512i sum3 = block_sum<kLevel>(w4[3], ActivationBlock(x4[3]), k);
    return _mm_fmadd_ps(_mm_mul_ps(q6k_scales(FourBlocks<BlockQ6K>::consecutive(w4)), activation_scales(x4)),
                        _mm_cvtepi32_ps(block_totals(sum0, sum1, sum2, sum3)), acc);
  }

  // The weight side of group(), unpacked once and paired with many activations by group(Group, ...)
  // with the same float operations, so each token gets group()'s bits.
  struct Group {
    Q6KUnpacked blocks[4];
    __m128 d;
  };
  Group unpack_group(const BlockQ6K* w4) const {
    Group g;
    for (int j = 0; j < 4; ++j) g.blocks[j] = unpack<kLevel>(w4[j], k);
    g.d = q6k_scales(FourBlocks<BlockQ6K>::consecutive(w4));
    return g;
  }
  __m128 group(const Group& g, const BlockQ8K* x4, __m128 acc) const {
    const __m512i sum0 = block_sum<kLevel>(g.blocks[0], ActivationBlock(x4[0]), k);
    const __m512i sum1 = block_sum<kLevel>(g.blocks[1], ActivationBlock(x4[1]), k);
    const __m512i sum2 = block_sum<kLevel>(g.blocks[2], ActivationBlock(x4[2]), k);
    const __m512i sum3 = block_sum<kLevel>(g.blocks[3], ActivationBlock(x4[3]), k);
    return _mm_fmadd_ps(_mm_mul_ps(g.d, activation_scales(x4)), _mm_cvtepi32_ps(block_totals(sum0, sum1, sum2, sum3)),
                        acc);
  }

  // One block of four rows, sharing x's loads: lane r holds row r's d * x.d and integer total.
  struct Terms {
    __m128 scales;
    __m128 totals;
  };
  Terms of_rows(const FourBlocks<BlockQ6K>& w, const BlockQ8K& x) const {
    const ActivationBlock y(x);
    const __m512i sum0 = block_sum<kLevel>(w[0], y, k);
    const __m512i sum1 = block_sum<kLevel>(w[1], y, k);
    const __m512i sum2 = block_sum<kLevel>(w[2], y, k);
    const __m512i sum3 = block_sum<kLevel>(w[3], y, k);
    return {_mm_mul_ps(q6k_scales(w), _mm_set1_ps(x.d)), _mm_cvtepi32_ps(block_totals(sum0, sum1, sum2, sum3))};
  }

  __m128 across_rows(const FourBlocks<BlockQ6K>& w, const BlockQ8K& x, __m128 acc) const {
    const Terms t = of_rows(w, x);
    return _mm_fmadd_ps(t.scales, t.totals, acc);
  }

  // tail(w[r], x) in lane r.
  __m128 tails(const FourBlocks<BlockQ6K>& w, const BlockQ8K& x) const {
    const Terms t = of_rows(w, x);
    return _mm_mul_ps(t.scales, t.totals);
  }

  // One block on its own (the last one to three of a row).
  float tail(const BlockQ6K& w1, const BlockQ8K& x1) const {
    const float total = static_cast<float>(_mm512_reduce_add_epi32(block_sum<kLevel>(w1, ActivationBlock(x1), k)));
    return fp16_scalar(w1.d) * x1.d * total;
  }
};

// The 8 scales (bytes 0-7) and 8 mins (bytes 8-15) of two Q4_K or Q5_K blocks (the two formats pack
// them alike, see quant/kquant_scale_min.hpp), unpacked one block per 128-bit lane (Zen 4 runs a 256-bit operation at
// the cost of a 128-bit one): with a block's 12 packed bytes as dwords w0, w1, w2, its result
// dwords are [w0 & 0x3F.., (w2 & 0x0F..) | ((w0 >> 2) & 0x30..), w1 & 0x3F.., ((w2 >> 4) & 0x0F..) |
// ((w1 >> 2) & 0x30..)]. Each 16-byte load reads 4 bytes past the scales (qh in Q5_K, qs in Q4_K),
// which follow in the same block.
struct Q5KScaleConstants {
  __m256i low_shift = _mm256_set_epi32(4, 0, 0, 0, 4, 0, 0, 0);
  __m256i low_mask = _mm256_set_epi32(0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F, 0x0F0F0F0F, 0x3F3F3F3F,
                                      0x0F0F0F0F, 0x3F3F3F3F);
  __m256i high_mask = _mm256_set_epi32(0x30303030, 0, 0x30303030, 0, 0x30303030, 0, 0x30303030, 0);
};

template <class Block>
inline __m256i unpack_scales_mins(const Block& first, const Block& second, const Q5KScaleConstants& k) {
  const __m256i words =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(first.scales))),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(second.scales)), 1);
  const __m256i low = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_shuffle_epi32(words, _MM_SHUFFLE(2, 1, 2, 0)), k.low_shift), k.low_mask);
  const __m256i high = _mm256_srli_epi32(_mm256_shuffle_epi32(words, _MM_SHUFFLE(1, 1, 0, 0)), 2);
  return _mm256_ternarylogic_epi32(low, high, k.high_mask, 0xF8);  // low | (high & high_mask)
}

// Q5_K and Q4_K: 64 quants per zmm, read from qs in one of two layouts (Q4_K's qs is laid out as
// Q5_K's). The fifth bit of a Q5_K quant of sub-block j is bit j of qh, in every layout.
// - Chunks: one 32-byte chunk c of qs in both halves of a zmm, the low half keeping the low nibbles
//   (sub-block 2c), the high half shifted down to the high nibbles (sub-block 2c+1): exactly the
//   order of the Q8_K quants.
// - ChunkPairs: two chunks (64 bytes) in one zmm, the low nibbles of both (sub-blocks 4p and 4p+2)
//   in one vector and the high nibbles (4p+1 and 4p+3) in the next: half the loads and a plain
//   shift instead of a variable one, but the Q8_K quants must be rearranged to match
//   (paired_chunks), which the multi-row kernels do once for four rows.
enum class Q5KLayout { Chunks, ChunkPairs };

// The sub-block held by 128-bit lane `lane128` of quant vector v (0..3).
constexpr int q5k_sub_block(Q5KLayout layout, int v, int lane128) {
  return layout == Q5KLayout::Chunks ? 2 * v + lane128 / 2 : 4 * (v / 2) + v % 2 + 2 * (lane128 / 2);
}

inline ActivationBlock paired_chunks(const ActivationBlock& y) {
  ActivationBlock paired = y;
  for (int p = 0; p < 2; ++p) {
    paired.qs[2 * p] = _mm512_shuffle_i64x2(y.qs[2 * p], y.qs[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0));
    paired.qs[2 * p + 1] = _mm512_shuffle_i64x2(y.qs[2 * p], y.qs[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2));
  }
  return paired;
}

template <Q5KLayout kLayout>
struct Q5KConstants {
  __m512i low_nibble = _mm512_set1_epi8(0x0F);
  __m512i sixteen = _mm512_set1_epi8(16);
  __m512i nibble_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  // Interleaved [d0, dmin0, d1, dmin1, ...] (fp16) to [d0, d1, d2, d3, dmin0, ...].
  __m128i split_d_dmin = _mm_set_epi8(15, 14, 11, 10, 7, 6, 3, 2, 13, 12, 9, 8, 5, 4, 1, 0);
  // The scales of a pair of blocks are int16 lanes 0-7 (the first block's) and 8-15 (the second's)
  // of one vector; index [1] picks the second block's.
  __m512i arrange[2] = {
      arrange_scales_index([](int v, int lane128) { return q5k_sub_block(kLayout, v, lane128); }),
      arrange_scales_index([](int v, int lane128) { return 8 + q5k_sub_block(kLayout, v, lane128); })};
  __m512i fifth_bit[4];
  // With GFNI, the fifth bit of every quant moves straight to bit 4 with the rest cleared.
  __m512i fifth_bit_to_4[4];
  __m512i pick[4];
  Q5KConstants() {
    for (int v = 0; v < 4; ++v) {
      const int low = q5k_sub_block(kLayout, v, 0);
      const int high = q5k_sub_block(kLayout, v, 2);
      fifth_bit[v] = _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << low)),
                                        _mm256_set1_epi8(static_cast<char>(1 << high)), 1);
      fifth_bit_to_4[v] = per_half_matrices(bit_move(low, 4), bit_move(high, 4));
      pick[v] = pick_scale(v);
    }
  }
  Q5KScaleConstants scale_constants;
  // Packed vectors 0+1 and 2+3, of the first and of the second block of a pair.
  __m512i packed_arrange[2][2] = {
      {packed_scales_index([](int v, int lane128) { return q5k_sub_block(kLayout, v, lane128); }),
       packed_scales_index([](int v, int lane128) { return q5k_sub_block(kLayout, 2 + v, lane128); })},
      {packed_scales_index([](int v, int lane128) { return 8 + q5k_sub_block(kLayout, v, lane128); }),
       packed_scales_index([](int v, int lane128) { return 8 + q5k_sub_block(kLayout, 2 + v, lane128); })}};
};

// The sums of the Q8_K quants of each 32-value sub-block, j = 0..7, as int16 (|sum| <= 32 * 128).
inline __m128i sub_block_sums(const ActivationBlock& y) {
  return _mm256_cvtepi32_epi16(_mm256_madd_epi16(y.bsums, _mm256_set1_epi16(1)));
}

// The scales and min sums of a pair of blocks.
struct Q5KScalePair {
  __m512i scales16;  // int16: the first block's 8 scales in lanes 0-7, the second's in 8-15
  __m256i mins;      // int32: 4 lanes adding up to sum_j m_j * sum(y_j) per block, one block per 128 bits
};

// `sub_sums`: sub_block_sums of the first block's activation in the low 128 bits, of the second's
// in the high 128 bits.
template <class Block, Q5KLayout kLayout>
inline Q5KScalePair scale_pair(const Block& first, const Block& second, __m256i sub_sums,
                               const Q5KConstants<kLayout>& k) {
  const __m256i scales_mins = unpack_scales_mins(first, second, k.scale_constants);
  const __m256i zero = _mm256_setzero_si256();
  return {_mm512_castsi256_si512(_mm256_unpacklo_epi8(scales_mins, zero)),
          _mm256_madd_epi16(_mm256_unpackhi_epi8(scales_mins, zero), sub_sums)};
}

// [min total of block a, of b, of c, of d] from the scale pairs (a, b) and (c, d), exactly.
inline __m128i min_totals(__m256i ab, __m256i cd) {
  // Per 128 bits: [a0 + a2, c0 + c2, a1 + a3, c1 + c3], b and d in the high half.
  const __m256i halves = _mm256_add_epi32(_mm256_unpacklo_epi32(ab, cd), _mm256_unpackhi_epi32(ab, cd));
  // [a, c, a, c | b, d, b, d]
  const __m256i sums = _mm256_add_epi32(halves, _mm256_shuffle_epi32(halves, _MM_SHUFFLE(1, 0, 3, 2)));
  return _mm_unpacklo_epi32(_mm256_castsi256_si128(sums), _mm256_extracti128_si256(sums, 1));
}

// The weight side of one Q4_K or Q5_K block, unpacked: its quants (in kLayout's order) and its
// scales as scaled_sum pairs them with an activation. The GEMM unpacks a block once for all its
// tokens.
struct ScaleMinUnpacked {
  __m512i q[4];
  __m512i scales[2];  // with VNNI the packed-arranged scales of vectors 0+1 and 2+3, else [0] arranged
};

// The block's quants and its scales, those of a scale pair's first (kSecond = 0) or second (1) block.
template <Avx512Level kLevel, Q5KLayout kLayout, int kSecond, class Block>
inline ScaleMinUnpacked unpack(const Block& w, __m512i scales16, const Q5KConstants<kLayout>& k) {
  constexpr bool kFifthBit = std::is_same_v<Block, BlockQ5K>;
  ScaleMinUnpacked u;
  // The nibbles of vector v in bits 0-3 of each byte, whatever is above them.
  __m512i nibbles[4];
  for (int c = 0; c < 4; ++c) {
    if constexpr (kLayout == Q5KLayout::Chunks) {
      nibbles[c] = _mm512_srlv_epi16(load_twice(w.qs + 32 * c), k.nibble_shift);
    } else if (c % 2 == 0) {
      nibbles[c] = _mm512_loadu_si512(w.qs + 32 * c);
      __asm__("" : "+v"(nibbles[c]));  // one load: see the Q6_K kernel's ql
      nibbles[c + 1] = _mm512_srli_epi16(nibbles[c], 4);
    }
  }
  if constexpr (!kFifthBit) {
    for (int v = 0; v < 4; ++v) u.q[v] = _mm512_and_si512(nibbles[v], k.low_nibble);
  } else {
    const __m512i qh = load_twice(w.qh);
    for (int v = 0; v < 4; ++v) {
      if constexpr (kLevel == Avx512Level::VnniGfni) {
        u.q[v] = merge_nibbles(nibbles[v], move_bits<kLevel>(qh, k.fifth_bit_to_4[v]), k.low_nibble);
      } else {
        const __m512i low_nibbles = _mm512_and_si512(nibbles[v], k.low_nibble);
        const __mmask64 has_fifth_bit = _mm512_test_epi8_mask(qh, k.fifth_bit[v]);
        u.q[v] = _mm512_mask_add_epi8(low_nibbles, has_fifth_bit, low_nibbles, k.sixteen);
      }
    }
  }
  if constexpr (kLevel != Avx512Level::Bw) {
    for (int pair = 0; pair < 2; ++pair) {
      u.scales[pair] = _mm512_permutexvar_epi16(k.packed_arrange[kSecond][pair], scales16);
    }
  } else {
    u.scales[0] = _mm512_permutexvar_epi16(k.arrange[kSecond], scales16);
    u.scales[1] = u.scales[0];
  }
  return u;
}

// 16 lanes adding up to sum_j sc_j * q_j . y_j, with y in the order of the unpacked quants.
template <Avx512Level kLevel, Q5KLayout kLayout>
inline __m512i scaled_sum(const ScaleMinUnpacked& u, const ActivationBlock& y, const Q5KConstants<kLayout>& k) {
  __m512i sum;
  if constexpr (kLevel != Avx512Level::Bw) {
    sum = _mm512_setzero_si512();
    for (int pair = 0; pair < 2; ++pair) {
      sum = _mm512_dpwssd_epi32(
          sum, packed_dots<kLevel>(u.q[2 * pair], y.qs[2 * pair], u.q[2 * pair + 1], y.qs[2 * pair + 1]),
          u.scales[pair]);
    }
  } else {
    // Two accumulators: the chain of dependent vpmaddwd + vpaddd is half as long.
    __m512i sums[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    for (int c = 0; c < 4; ++c) {
      sums[c % 2] = accumulate_scaled(sums[c % 2], _mm512_maddubs_epi16(u.q[c], y.qs[c]),
                                      _mm512_shuffle_epi8(u.scales[0], k.pick[c]));
    }
    sum = _mm512_add_epi32(sums[0], sums[1]);
  }
  return sum;
}

template <Avx512Level kLevel, Q5KLayout kLayout, int kSecond, class Block>
inline __m512i scaled_sum(const Block& w, const ActivationBlock& y, __m512i scales16, const Q5KConstants<kLayout>& k) {
  return scaled_sum<kLevel>(unpack<kLevel, kLayout, kSecond>(w, scales16, k), y, k);
}

// The d and dmin of four blocks, adjacent in each: one dword per block, [d0, dmin0, d1, dmin1, ...].
template <class Block>
inline __m128i d_dmin_words(const FourBlocks<Block>& w) {
  __m128i d_dmin = _mm_cvtsi32_si128(load_dword(&w[0].d));
  d_dmin = _mm_insert_epi32(d_dmin, load_dword(&w[1].d), 1);
  d_dmin = _mm_insert_epi32(d_dmin, load_dword(&w[2].d), 2);
  return _mm_insert_epi32(d_dmin, load_dword(&w[3].d), 3);
}

// Q4_K and Q5_K, which share everything but the fifth quant bit.
template <class Block, Avx512Level kLevel>
struct ScaleMinDot {
  static constexpr bool kRunsOutOfLine = true;  // see dot_four_runs
  Q5KConstants<Q5KLayout::Chunks> k;
  Q5KConstants<Q5KLayout::ChunkPairs> k_pairs;

  // Lane by lane, d * xd, dmin * xd and the integer scaled and min totals of four blocks, from their
  // scaled sums and the min sums of their scale pairs.
  struct Terms {
    __m128 d_scales;
    __m128 dmin_scales;
    __m128 scaled;
    __m128 mins;
    // acc + d * xd * scaled - dmin * xd * mins
    __m128 accumulate(__m128 acc) const {
      return _mm_fnmadd_ps(dmin_scales, mins, _mm_fmadd_ps(d_scales, scaled, acc));
    }
    // d * xd * scaled - dmin * xd * mins, as tail() computes it
    __m128 value() const { return _mm_fnmadd_ps(dmin_scales, mins, _mm_mul_ps(d_scales, scaled)); }
  };
  Terms terms(const FourBlocks<Block>& w, __m128 xd, __m512i s0, __m512i s1, __m512i s2, __m512i s3,
              const Q5KScalePair& p01, const Q5KScalePair& p23) const {
    const __m256 scales =
        _mm256_mul_ps(_mm256_cvtph_ps(_mm_shuffle_epi8(d_dmin_words(w), k.split_d_dmin)), _mm256_set_m128(xd, xd));
    return {_mm256_castps256_ps128(scales), _mm256_extractf128_ps(scales, 1),
            _mm_cvtepi32_ps(block_totals(s0, s1, s2, s3)), _mm_cvtepi32_ps(min_totals(p01.mins, p23.mins))};
  }

  // Four blocks of one row. One statement per block, in address order (see the Q6_K kernel). Always
  // inlined (see dot_one_row).
  [[gnu::always_inline]] __m128 group(const Block* w4, const BlockQ8K* x4, __m128 acc) const {
    const ActivationBlock y0(x4[0]);
    const ActivationBlock y1(x4[1]);
    const ActivationBlock y2(x4[2]);
    const ActivationBlock y3(x4[3]);
    const Q5KScalePair p01 = scale_pair(w4[0], w4[1], _mm256_set_m128i(sub_block_sums(y1), sub_block_sums(y0)), k);
    const __m512i s0 = scaled_sum<kLevel, Q5KLayout::Chunks, 0>(w4[0], y0, p01.scales16, k);
    const __m512i s1 = scaled_sum<kLevel, Q5KLayout::Chunks, 1>(w4[1], y1, p01.scales16, k);
    const Q5KScalePair p23 = scale_pair(w4[2], w4[3], _mm256_set_m128i(sub_block_sums(y3), sub_block_sums(y2)), k);
    const __m512i s2 = scaled_sum<kLevel, Q5KLayout::Chunks, 0>(w4[2], y2, p23.scales16, k);
    const __m512i s3 = scaled_sum<kLevel, Q5KLayout::Chunks, 1>(w4[3], y3, p23.scales16, k);
    return terms(FourBlocks<Block>::consecutive(w4), activation_scales(x4), s0, s1, s2, s3, p01, p23).accumulate(acc);
  }

  // The weight side of group(), unpacked once and paired with many activations by group(Group, ...)
  // with the same float operations, so each token gets group()'s bits.
  struct Group {
    ScaleMinUnpacked blocks[4];
    __m256i mins16[2];  // the mins of blocks 0 and 1, of blocks 2 and 3, as scale_pair widens them
    __m256 d_dmin;      // [d0..d3 | dmin0..dmin3]
  };
  Group unpack_group(const Block* w4) const {
    Group g;
    const __m256i zero = _mm256_setzero_si256();
    for (int pair = 0; pair < 2; ++pair) {
      const Block& first = w4[2 * pair];
      const Block& second = w4[2 * pair + 1];
      const __m256i scales_mins = unpack_scales_mins(first, second, k.scale_constants);
      const __m512i scales16 = _mm512_castsi256_si512(_mm256_unpacklo_epi8(scales_mins, zero));
      g.mins16[pair] = _mm256_unpackhi_epi8(scales_mins, zero);
      g.blocks[2 * pair] = unpack<kLevel, Q5KLayout::Chunks, 0>(first, scales16, k);
      g.blocks[2 * pair + 1] = unpack<kLevel, Q5KLayout::Chunks, 1>(second, scales16, k);
    }
    g.d_dmin = _mm256_cvtph_ps(_mm_shuffle_epi8(d_dmin_words(FourBlocks<Block>::consecutive(w4)), k.split_d_dmin));
    return g;
  }
  __m128 group(const Group& g, const BlockQ8K* x4, __m128 acc) const {
    const ActivationBlock y0(x4[0]);
    const ActivationBlock y1(x4[1]);
    const ActivationBlock y2(x4[2]);
    const ActivationBlock y3(x4[3]);
    const __m256i mins01 = _mm256_madd_epi16(g.mins16[0], _mm256_set_m128i(sub_block_sums(y1), sub_block_sums(y0)));
    const __m256i mins23 = _mm256_madd_epi16(g.mins16[1], _mm256_set_m128i(sub_block_sums(y3), sub_block_sums(y2)));
    const __m512i s0 = scaled_sum<kLevel>(g.blocks[0], y0, k);
    const __m512i s1 = scaled_sum<kLevel>(g.blocks[1], y1, k);
    const __m512i s2 = scaled_sum<kLevel>(g.blocks[2], y2, k);
    const __m512i s3 = scaled_sum<kLevel>(g.blocks[3], y3, k);
    const __m128 xd = activation_scales(x4);
    const __m256 scales = _mm256_mul_ps(g.d_dmin, _mm256_set_m128(xd, xd));
    const Terms t{_mm256_castps256_ps128(scales), _mm256_extractf128_ps(scales, 1),
                  _mm_cvtepi32_ps(block_totals(s0, s1, s2, s3)), _mm_cvtepi32_ps(min_totals(mins01, mins23))};
    return t.accumulate(acc);
  }

  // One block of four rows, sharing x's loads.
  Terms of_rows(const FourBlocks<Block>& w, const BlockQ8K& x) const {
    const ActivationBlock y = paired_chunks(ActivationBlock(x));
    const __m256i sub_sums = _mm256_broadcastsi128_si256(sub_block_sums(y));
    const Q5KScalePair p01 = scale_pair(w[0], w[1], sub_sums, k_pairs);
    const __m512i s0 = scaled_sum<kLevel, Q5KLayout::ChunkPairs, 0>(w[0], y, p01.scales16, k_pairs);
    const __m512i s1 = scaled_sum<kLevel, Q5KLayout::ChunkPairs, 1>(w[1], y, p01.scales16, k_pairs);
    const Q5KScalePair p23 = scale_pair(w[2], w[3], sub_sums, k_pairs);
    const __m512i s2 = scaled_sum<kLevel, Q5KLayout::ChunkPairs, 0>(w[2], y, p23.scales16, k_pairs);
    const __m512i s3 = scaled_sum<kLevel, Q5KLayout::ChunkPairs, 1>(w[3], y, p23.scales16, k_pairs);
    return terms(w, _mm_set1_ps(x.d), s0, s1, s2, s3, p01, p23);
  }

  __m128 across_rows(const FourBlocks<Block>& w, const BlockQ8K& x, __m128 acc) const {
    return of_rows(w, x).accumulate(acc);
  }

  // tail(w[r], x) in lane r.
  __m128 tails(const FourBlocks<Block>& w, const BlockQ8K& x) const { return of_rows(w, x).value(); }

  // One block on its own (the last one to three of a row), as the first of a pair with itself.
  float tail(const Block& w1, const BlockQ8K& x1) const {
    const ActivationBlock y(x1);
    const Q5KScalePair pair = scale_pair(w1, w1, _mm256_broadcastsi128_si256(sub_block_sums(y)), k);
    const float scaled = static_cast<float>(_mm512_reduce_add_epi32(scaled_sum<kLevel, Q5KLayout::Chunks, 0>(w1, y, pair.scales16, k)));
    const float mins = static_cast<float>(_mm512_reduce_add_epi32(_mm512_zextsi128_si512(_mm256_castsi256_si128(pair.mins))));
    // Explicit FMA, so that the compiler cannot contract this differently from tails().
    const Terms t{_mm_set_ss(fp16_scalar(w1.d) * x1.d), _mm_set_ss(fp16_scalar(w1.dmin) * x1.d), _mm_set_ss(scaled),
                  _mm_set_ss(mins)};
    return _mm_cvtss_f32(t.value());
  }
};

template <Avx512Level kLevel>
using Q5KDot = ScaleMinDot<BlockQ5K, kLevel>;
template <Avx512Level kLevel>
using Q4KDot = ScaleMinDot<BlockQ4K, kLevel>;

}  // namespace
}  // namespace brick::quant::kernels
