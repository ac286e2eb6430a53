#pragma once
// The rows every differential test of a quantizer runs over, and how it reports differences: about
// 2000 rows (over 3000 blocks of 256 values) of random, adversarial and structured data, each
// structured block aimed at a rule of the quantizers (rounding ties, scales that round to zero,
// sparse, constant, one-sided, subnormal, huge, infinite and NaN values).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "brick/quant/kquants.hpp"
#include "kquant_testing.hpp"
#include "support/random_data.hpp"

namespace brick::test {

struct Row {
  std::string name;
  std::vector<float> values;
};

// One 256-value block of a structured kind that targets a specific rule of the quantizers.
inline std::vector<float> structured_block(std::size_t kind, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> small_int(-64, 64);
  std::uniform_int_distribution<std::size_t> index(0, quant::kBlockSize - 1);
  std::vector<float> x(quant::kBlockSize);
  const float scale = std::ldexp(1.0f, std::uniform_int_distribution<int>(-20, 20)(rng));
  switch (kind) {
    case 0:  // halves and quarters of a power of two: many exact rounding ties
      for (float& v : x) v = small_int(rng) * 0.25f * scale;
      break;
    case 1:  // one loud sub-block, the others so quiet their 6/8-bit scales round to zero
      for (float& v : x) v = unit(rng) * 1e-4f * scale;
      for (std::size_t i = 64; i < 96; ++i) x[i] = unit(rng) * 1e3f * scale;
      break;
    case 2:  // sparse: mostly zeros (and negative zeros)
      for (std::size_t i = 0; i < quant::kBlockSize; ++i) x[i] = (i % 3 == 0) ? -0.0f : 0.0f;
      for (int k = 0; k < 5; ++k) x[index(rng)] = unit(rng) * scale;
      break;
    case 3:  // constant sub-blocks of different levels and signs
      for (std::size_t i = 0; i < quant::kBlockSize; ++i)
        x[i] = static_cast<float>(int(i / 16) - 8) * scale;
      break;
    case 4:  // all positive (Q5_K's min clamps to zero) with a large offset
      for (float& v : x) v = (2.0f + unit(rng)) * scale;
      break;
    case 5:  // all negative, the largest magnitude negative
      for (float& v : x) v = -(2.0f + unit(rng)) * scale;
      break;
    case 6:  // normal numbers mixed with subnormals
      for (std::size_t i = 0; i < quant::kBlockSize; ++i) {
        x[i] = (i % 2) ? unit(rng) * 1e-40f : unit(rng) * 1e-3f;
      }
      break;
    case 7:  // a single spike in a quiet block, positive or negative
      for (float& v : x) v = unit(rng) * 1e-2f;
      x[index(rng)] = (rng() & 1 ? 1.0f : -1.0f) * 1e4f * scale;
      break;
    case 8:  // values near the float range limit: squares overflow to infinity
      for (float& v : x) v = unit(rng) * 3e38f;
      break;
    case 9:  // Q5_K sub-blocks spanning 0..31.6, integers with a few half-integers: one candidate
             // inverse scale, (31 - 0.5 + 0.1 * 11) / 31.6, is 1 or just below 1 depending on the
             // order of its float operations, which decides how the halves round; ggml's order wins
      for (std::size_t i = 0; i < quant::kBlockSize; ++i) {
        const int whole = std::uniform_int_distribution<int>(0, 31)(rng);
        const bool half = std::uniform_int_distribution<int>(0, 7)(rng) == 0;
        x[i] = (i % 32 == 0 ? 31.6f : i % 32 == 1 ? 0.0f : whole + (half ? 0.5f : 0.0f)) * scale;
      }
      break;
    case 10:  // infinities among normal values
      for (float& v : x) v = unit(rng) * scale;
      for (int k = 0; k < 3; ++k)
        x[index(rng)] = (rng() & 1 ? 1 : -1) * std::numeric_limits<float>::infinity();
      break;
    case 11:  // NaNs among normal values
      for (float& v : x) v = unit(rng) * scale;
      for (int k = 0; k < 3; ++k) x[index(rng)] = std::numeric_limits<float>::quiet_NaN();
      break;
    default:  // plain uniform at a random scale
      for (float& v : x) v = unit(rng) * scale;
      break;
  }
  return x;
}

inline constexpr std::size_t kStructuredKinds = 13;

inline const std::vector<Row>& rows() {
  static const std::vector<Row> all = [] {
    std::vector<Row> out;
    std::uint64_t seed = 1;
    for (const std::size_t n : {256u, 768u, 4096u, 16384u}) {
      for (auto& p : adversarial_patterns(n, seed++)) {
        out.push_back({p.name + "/n" + std::to_string(n), std::move(p.values)});
      }
    }
    for (const float s : {1e-30f, 1e-6f, 1e-3f, 0.02f, 1.0f, 100.0f, 1e4f, 1e8f}) {
      const std::string tag = "/scale" + std::to_string(s);
      out.push_back({"normal" + tag, normal(4096, seed++, 0.0f, s)});
      out.push_back({"uniform" + tag, uniform(4096, seed++, -s, s)});
      out.push_back({"positive" + tag, uniform(4096, seed++, 0.0f, s)});
      out.push_back({"negative" + tag, uniform(4096, seed++, -s, 0.0f)});
    }
    std::mt19937_64 rng(seed);
    for (std::size_t b = 0; b < 2000; ++b) {
      const std::size_t kind = b % kStructuredKinds;
      out.push_back({"structured" + std::to_string(kind) + "/" + std::to_string(b),
                     structured_block(kind, rng)});
    }
    return out;
  }();
  return all;
}

inline std::size_t total_blocks() {
  std::size_t blocks = 0;
  for (const Row& row : rows()) blocks += row.values.size() / quant::kBlockSize;
  return blocks;
}

// Compares ours with ggml's block by block; reports the first few differing blocks in hex.
template <typename Block>
void expect_same_blocks(const Row& row, const std::vector<Block>& ours,
                        const std::vector<Block>& ggml, int& reported) {
  for (std::size_t b = 0; b < ours.size(); ++b) {
    if (std::memcmp(&ours[b], &ggml[b], sizeof(Block)) == 0) continue;
    ADD_FAILURE() << row.name << " block " << b << " differs\n  ours "
                  << to_hex(std::vector<Block>{ours[b]}) << "\n  ggml "
                  << to_hex(std::vector<Block>{ggml[b]});
    if (++reported >= 5) return;
  }
}

inline void expect_same_floats(const std::string& what, std::span<const float> ours,
                        std::span<const float> ggml, int& reported) {
  const std::ptrdiff_t at = first_bit_difference(ours, ggml);
  if (at < 0) return;
  ADD_FAILURE() << what << ": first differing value at " << at << ": ours " << ours[at] << ", ggml "
                << ggml[at];
  ++reported;
}

}  // namespace brick::test
