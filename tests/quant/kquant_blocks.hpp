#pragma once
// Test inputs for the k-quant kernels: blocks filled with random bytes (every byte pattern is a valid
// Q5_K/Q6_K block as long as the fp16 scales are finite), Q8_K rows with consistent group sums, and
// an independent exact evaluation of the dot product written from ggml's dequantization loops.
#include <cmath>
#include <cstdint>
#include <random>
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

inline std::vector<quant::BlockQ5K> random_q5k(std::size_t blocks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<quant::BlockQ5K> out(blocks);
  for (auto& block : out) {
    fill_bytes(rng, &block, sizeof block);
    block.d = random_scale(rng, 1e-4f, 2e-2f);
    block.dmin = random_scale(rng, 1e-4f, 2e-2f);
  }
  return out;
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

// The dot product evaluated block by block in exact integers (64-bit) and double, with the sum of
// the absolute block contributions: the scale against which float summation error is judged.
struct ExactDot {
  double value = 0.0;
  double magnitude = 0.0;
  std::int64_t integer = 0;  // sum of the integer block parts when every float scale is 1
};

// Follows ggml's dequantize_row_q5_K: chunks of 64 values, sub-block scale/min pairs, qh bit masks
// shifted by two per chunk. Uses the actual Q8_K quants for the mins, not bsums.
inline ExactDot exact_dot(const std::vector<quant::BlockQ5K>& w, const std::vector<quant::BlockQ8K>& x) {
  ExactDot out;
  for (std::size_t b = 0; b < w.size(); ++b) {
    const std::uint8_t* q = w[b].scales;
    auto scale_min = [q](int j, int& sc, int& m) {
      if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
      } else {
        sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
      }
    };
    std::int64_t scaled = 0;
    std::int64_t mins = 0;
    const std::uint8_t* ql = w[b].qs;
    std::uint8_t u1 = 1;
    std::uint8_t u2 = 2;
    int y = 0;
    for (int j = 0; j < 256; j += 64) {
      int sc1, m1, sc2, m2;
      scale_min(j / 32, sc1, m1);
      scale_min(j / 32 + 1, sc2, m2);
      for (int l = 0; l < 32; ++l, ++y) {
        scaled += static_cast<std::int64_t>(sc1) * ((ql[l] & 0xF) + (w[b].qh[l] & u1 ? 16 : 0)) * x[b].qs[y];
        mins += static_cast<std::int64_t>(m1) * x[b].qs[y];
      }
      for (int l = 0; l < 32; ++l, ++y) {
        scaled += static_cast<std::int64_t>(sc2) * ((ql[l] >> 4) + (w[b].qh[l] & u2 ? 16 : 0)) * x[b].qs[y];
        mins += static_cast<std::int64_t>(m2) * x[b].qs[y];
      }
      ql += 32;
      u1 <<= 2;
      u2 <<= 2;
    }
    const double d = static_cast<double>(quant::fp16_to_fp32(w[b].d)) * x[b].d;
    const double dmin = static_cast<double>(quant::fp16_to_fp32(w[b].dmin)) * x[b].d;
    out.value += d * static_cast<double>(scaled) - dmin * static_cast<double>(mins);
    out.magnitude += std::abs(d * static_cast<double>(scaled)) + std::abs(dmin * static_cast<double>(mins));
    out.integer += scaled - mins;
  }
  return out;
}

// Follows ggml's dequantize_row_q6_K: two halves of 128 values, four values per l.
inline ExactDot exact_dot(const std::vector<quant::BlockQ6K>& w, const std::vector<quant::BlockQ8K>& x) {
  ExactDot out;
  for (std::size_t b = 0; b < w.size(); ++b) {
    std::int64_t scaled = 0;
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
        scaled += static_cast<std::int64_t>(sc[is + 0]) * q1 * y[l];
        scaled += static_cast<std::int64_t>(sc[is + 2]) * q2 * y[l + 32];
        scaled += static_cast<std::int64_t>(sc[is + 4]) * q3 * y[l + 64];
        scaled += static_cast<std::int64_t>(sc[is + 6]) * q4 * y[l + 96];
      }
      ql += 64;
      qh += 32;
      sc += 8;
      y += 128;
    }
    const double d = static_cast<double>(quant::fp16_to_fp32(w[b].d)) * x[b].d;
    out.value += d * static_cast<double>(scaled);
    out.magnitude += std::abs(d * static_cast<double>(scaled));
    out.integer += scaled;
  }
  return out;
}

}  // namespace brick::test
