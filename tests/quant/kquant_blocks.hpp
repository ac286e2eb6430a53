#pragma once
// Test inputs for the k-quant kernels: blocks filled with random bytes (every byte pattern is a valid
// Q4_K/Q5_K/Q6_K block as long as the fp16 scales are finite), Q8_K rows with consistent group sums,
// and an independent exact evaluation of the dot product written from ggml's dequantization loops.
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "brick/quant/fp16.hpp"
#include "brick/quant/kquants.hpp"

namespace brick::test {

inline quant::fp16_t random_scale(std::mt19937_64& rng, float lo, float hi) {
  return quant::fp32_to_fp16(std::uniform_real_distribution<float>(lo, hi)(rng));
}

inline void fill_bytes(std::mt19937_64& rng, void* data, std::size_t size) {
  auto* bytes = static_cast<std::uint8_t*>(data);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::uint8_t>(rng());
}

// Q4_K and Q5_K blocks: random bytes, then positive super-block scales.
template <class Block>
std::vector<Block> random_scale_min_blocks(std::size_t blocks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Block> out(blocks);
  for (auto& block : out) {
    fill_bytes(rng, &block, sizeof block);
    block.d = random_scale(rng, 1e-4f, 2e-2f);
    block.dmin = random_scale(rng, 1e-4f, 2e-2f);
  }
  return out;
}

inline std::vector<quant::BlockQ4K> random_q4k(std::size_t blocks, std::uint64_t seed) {
  return random_scale_min_blocks<quant::BlockQ4K>(blocks, seed);
}

inline std::vector<quant::BlockQ5K> random_q5k(std::size_t blocks, std::uint64_t seed) {
  return random_scale_min_blocks<quant::BlockQ5K>(blocks, seed);
}

inline std::vector<quant::BlockQ6K> random_q6k(std::size_t blocks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<quant::BlockQ6K> out(blocks);
  for (auto& block : out) {
    fill_bytes(rng, &block, sizeof block);
    block.d = random_scale(rng, -2e-2f, 2e-2f);
  }
  return out;
}

// Quants in [lo, hi] (the full int8 range by default, -128 included) and bsums that match them.
inline std::vector<quant::BlockQ8K> random_q8k(std::size_t blocks, std::uint64_t seed, int lo = -128,
                                               int hi = 127) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(lo, hi);
  std::vector<quant::BlockQ8K> out(blocks);
  for (auto& block : out) {
    block.d = std::uniform_real_distribution<float>(1e-3f, 5e-2f)(rng);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) {
        block.qs[16 * g + i] = static_cast<std::int8_t>(value(rng));
        sum += block.qs[16 * g + i];
      }
      block.bsums[g] = static_cast<std::int16_t>(sum);
    }
  }
  return out;
}

// What a model holds: blocks of normally distributed weights quantized as llama-quantize would.
// Quantizing every block of a 14336x4096 matrix is slow, so `count` blocks are drawn in a seeded
// random order from 8192 such blocks: each row is still a different mix of real blocks.
template <class Block>
std::vector<Block> realistic_blocks(std::size_t count, std::uint64_t seed) {
  static const std::vector<Block> pool = [] {
    std::mt19937_64 rng(99);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> values(8192 * quant::kBlockSize);
    for (float& v : values) v = normal(rng);
    std::vector<Block> blocks(8192);
    if constexpr (std::is_same_v<Block, quant::BlockQ6K>) {
      quant::quantize_q6k(values, blocks);
    } else if constexpr (std::is_same_v<Block, quant::BlockQ5K>) {
      quant::quantize_q5k(values, blocks);
    } else {
      quant::quantize_q4k(values, blocks);
    }
    return blocks;
  }();
  std::mt19937_64 rng(seed);
  std::vector<Block> out(count);
  for (Block& block : out) block = pool[rng() % pool.size()];
  return out;
}

// The dot product evaluated block by block in exact integers (64-bit) and double, with the sum of
// the absolute values of its terms (each weight times its activation): the scale against which
// float summation error is judged.
struct ExactDot {
  double value = 0.0;
  double magnitude = 0.0;
  std::int64_t integer = 0;  // sum of the integer block parts when every float scale is 1
  double flushable = 0.0;    // sum of the terms a kernel that flushes subnormals to zero may drop
};

// Sub-block j's 6-bit scale and min in Q4_K and Q5_K, as ggml's get_scale_min_k4 reads them.
inline void scale_min_k4(const std::uint8_t* q, int j, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// The integer sums of one block: sum sc * q * y and sum m * y, and the sums of their terms' absolute
// values.
struct BlockSums {
  std::int64_t scaled = 0;
  std::int64_t mins = 0;
  std::int64_t scaled_abs = 0;
  std::int64_t mins_abs = 0;

  void add(std::int64_t sc, std::int64_t q, std::int64_t m, std::int64_t y) {
    scaled += sc * q * y;
    mins += m * y;
    scaled_abs += std::abs(sc * q * y);
    mins_abs += std::abs(m * y);
  }
};

// The terms of one Q4_K / Q5_K block: d * xd * scaled - dmin * xd * mins.
inline void add_scale_min_block(ExactDot& out, quant::fp16_t d, quant::fp16_t dmin, float xd, const BlockSums& s) {
  const double scale = static_cast<double>(quant::fp16_to_fp32(d)) * xd;
  const double min_scale = static_cast<double>(quant::fp16_to_fp32(dmin)) * xd;
  out.value += scale * static_cast<double>(s.scaled) - min_scale * static_cast<double>(s.mins);
  out.magnitude += std::abs(scale) * static_cast<double>(s.scaled_abs) + std::abs(min_scale) * static_cast<double>(s.mins_abs);
  out.integer += s.scaled - s.mins;
}

// Follows ggml's dequantize_row_q4_K: chunks of 64 values, the low nibbles of 32 bytes then their
// high nibbles, each 32 values with their own scale/min pair.
inline ExactDot exact_dot(const std::vector<quant::BlockQ4K>& w, const std::vector<quant::BlockQ8K>& x) {
  ExactDot out;
  for (std::size_t b = 0; b < w.size(); ++b) {
    BlockSums sums;
    const std::uint8_t* q = w[b].qs;
    int y = 0;
    for (int j = 0; j < 256; j += 64) {
      int sc1, m1, sc2, m2;
      scale_min_k4(w[b].scales, j / 32, sc1, m1);
      scale_min_k4(w[b].scales, j / 32 + 1, sc2, m2);
      for (int l = 0; l < 32; ++l, ++y) sums.add(sc1, q[l] & 0xF, m1, x[b].qs[y]);
      for (int l = 0; l < 32; ++l, ++y) sums.add(sc2, q[l] >> 4, m2, x[b].qs[y]);
      q += 32;
    }
    add_scale_min_block(out, w[b].d, w[b].dmin, x[b].d, sums);
  }
  return out;
}

// Follows ggml's dequantize_row_q5_K: chunks of 64 values, sub-block scale/min pairs, qh bit masks
// shifted by two per chunk. Uses the actual Q8_K quants for the mins, not bsums.
inline ExactDot exact_dot(const std::vector<quant::BlockQ5K>& w, const std::vector<quant::BlockQ8K>& x) {
  ExactDot out;
  for (std::size_t b = 0; b < w.size(); ++b) {
    BlockSums sums;
    const std::uint8_t* ql = w[b].qs;
    std::uint8_t u1 = 1;
    std::uint8_t u2 = 2;
    int y = 0;
    for (int j = 0; j < 256; j += 64) {
      int sc1, m1, sc2, m2;
      scale_min_k4(w[b].scales, j / 32, sc1, m1);
      scale_min_k4(w[b].scales, j / 32 + 1, sc2, m2);
      for (int l = 0; l < 32; ++l, ++y) sums.add(sc1, (ql[l] & 0xF) + (w[b].qh[l] & u1 ? 16 : 0), m1, x[b].qs[y]);
      for (int l = 0; l < 32; ++l, ++y) sums.add(sc2, (ql[l] >> 4) + (w[b].qh[l] & u2 ? 16 : 0), m2, x[b].qs[y]);
      ql += 32;
      u1 <<= 2;
      u2 <<= 2;
    }
    add_scale_min_block(out, w[b].d, w[b].dmin, x[b].d, sums);
  }
  return out;
}

// Follows ggml's dequantize_row_q6_K: two halves of 128 values, four values per l.
inline ExactDot exact_dot(const std::vector<quant::BlockQ6K>& w, const std::vector<quant::BlockQ8K>& x) {
  ExactDot out;
  for (std::size_t b = 0; b < w.size(); ++b) {
    BlockSums sums;
    const std::uint8_t* ql = w[b].ql;
    const std::uint8_t* qh = w[b].qh;
    const std::int8_t* sc = w[b].scales;
    const std::int8_t* y = x[b].qs;
    for (int n = 0; n < 256; n += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        sums.add(sc[is + 0], q1, 0, y[l]);
        sums.add(sc[is + 2], q2, 0, y[l + 32]);
        sums.add(sc[is + 4], q3, 0, y[l + 64]);
        sums.add(sc[is + 6], q4, 0, y[l + 96]);
      }
      ql += 64;
      qh += 32;
      sc += 8;
      y += 128;
    }
    const double d = static_cast<double>(quant::fp16_to_fp32(w[b].d)) * x[b].d;
    out.value += d * static_cast<double>(sums.scaled);
    out.magnitude += std::abs(d) * static_cast<double>(sums.scaled_abs);
    out.integer += sums.scaled;
  }
  return out;
}

}  // namespace brick::test
