// AttentionOp against attention computed directly from the cache in double, and the same bits
// whatever the pool splits it into.
#include "brick/model/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <ostream>
#include <vector>

#include "brick/core/assertion.hpp"
#include "brick/quant/fp16.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "support/random_data.hpp"

namespace brick::model {
namespace {

struct Case {
  const char* name;
  std::size_t heads, kv_heads, head_dim, cells, tokens;
  KvType type;
};

const Case kCases[] = {
    {"gqa_f16_decode", 8, 2, 16, 37, 1, KvType::F16},
    {"gqa_f16_batch", 8, 2, 16, 37, 20, KvType::F16},  // two chunks of tokens, the second short
    {"mqa_f32_decode", 6, 1, 24, 19, 1, KvType::F32},
    {"mha_f32_batch", 3, 3, 40, 9, 4, KvType::F32},  // a head of 40: a masked tail on every ISA
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

std::vector<Backend> supported_backends() {
  std::vector<Backend> backends;
  for (const Backend b : kConcreteBackends) {
    if (is_supported(b)) backends.push_back(b);
  }
  return backends;
}

float through_f16(float x) {
  return quant::fp16_to_fp32(quant::fp32_to_fp16(x));
}

// A cache of two layers whose second holds `cells` cells of one sequence, written through
// KvWriteOp (so rounded to F16 in an F16 cache), and the queries of `tokens` tokens.
class Filled {
 public:
  explicit Filled(const Case& c)
      : c_(c), cache_({2, c.cells + 3, c.kv_heads, c.head_dim, c.type}), q_(test::normal(c.tokens * width(), 7)) {
    std::vector<Pos> positions(c.cells);
    for (std::size_t i = 0; i < c.cells; ++i) positions[i] = static_cast<Pos>(i);
    EXPECT_TRUE(cache_.find_slot(0, positions, Placement::Contiguous).has_value());
    const std::size_t row = c.kv_heads * c.head_dim;
    const auto k = test::normal(c.cells * row, 3);
    const auto v = test::normal(c.cells * row, 4);
    std::vector<float> stored(2 * c.cells * row);
    KvWriteOp(cache_).run({k, v, 1, 0, c.cells}, stored, Backend::Scalar);
  }

  std::size_t width() const { return c_.heads * c_.head_dim; }
  const KvCache& cache() const { return cache_; }
  AttentionOp::Input input() const { return {q_, 1, c_.cells, c_.tokens}; }

  float key(std::size_t cell, std::size_t kv_head, std::size_t j) const { return stored(true, cell, kv_head, j); }
  float value(std::size_t cell, std::size_t kv_head, std::size_t j) const { return stored(false, cell, kv_head, j); }
  float query(std::size_t token, std::size_t head, std::size_t j) const {
    return q_[token * width() + head * c_.head_dim + j];
  }

 private:
  float stored(bool key, std::size_t cell, std::size_t kv_head, std::size_t j) const {
    const auto c = static_cast<CellIndex>(cell);
    const std::size_t at = kv_head * c_.head_dim + j;
    if (c_.type == KvType::F16) {
      const auto row = key ? cache_.key_row<std::uint16_t>(1, c) : cache_.value_row<std::uint16_t>(1, c);
      return quant::fp16_to_fp32(row[at]);
    }
    return key ? cache_.key_row<float>(1, c)[at] : cache_.value_row<float>(1, c)[at];
  }

  Case c_;
  KvCache cache_;
  std::vector<float> q_;
};

// softmax(K q / sqrt(d)) V per token and head over its causal window, in double, with q and the
// weights rounded to F16 for an F16 cache as the header says.
std::vector<float> direct_attention(const Case& c, const Filled& filled) {
  std::vector<float> out(c.tokens * filled.width());
  const std::size_t group = c.heads / c.kv_heads;
  for (std::size_t t = 0; t < c.tokens; ++t) {
    const std::size_t n = c.cells - c.tokens + 1 + t;
    for (std::size_t h = 0; h < c.heads; ++h) {
      const std::size_t kv = h / group;
      std::vector<double> s(n);
      double largest = -INFINITY;
      for (std::size_t cell = 0; cell < n; ++cell) {
        double dot = 0.0;
        for (std::size_t j = 0; j < c.head_dim; ++j) {
          const float q = filled.query(t, h, j);
          dot += static_cast<double>(c.type == KvType::F16 ? through_f16(q) : q) * filled.key(cell, kv, j);
        }
        s[cell] = dot / std::sqrt(static_cast<double>(c.head_dim));
        largest = std::max(largest, s[cell]);
      }
      double total = 0.0;
      for (double& x : s) total += (x = std::exp(x - largest));
      for (std::size_t j = 0; j < c.head_dim; ++j) {
        double acc = 0.0;
        for (std::size_t cell = 0; cell < n; ++cell) {
          const auto p = static_cast<float>(s[cell] / total);
          acc += static_cast<double>(c.type == KvType::F16 ? through_f16(p) : p) * filled.value(cell, kv, j);
        }
        out[t * filled.width() + h * c.head_dim + j] = static_cast<float>(acc);
      }
    }
  }
  return out;
}

class AttentionCases : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionCases, EveryBackendMatchesAttentionComputedFromTheCache) {
  const Case& c = GetParam();
  const Filled filled(c);
  const std::vector<float> expected = direct_attention(c, filled);
  ThreadPool pool(2);
  const AttentionOp op(filled.cache(), {c.heads, c.kv_heads, c.head_dim}, pool);
  for (const Backend backend : supported_backends()) {
    std::vector<float> out(op.output_size(filled.input()));
    op.run(filled.input(), out, backend);
    AssertionOutcome outcome;
    check_equivalence(AttentionOp::equivalence(c.type), out, expected, outcome);
    EXPECT_TRUE(outcome.passed) << name(backend) << ": " << outcome.violations << " values off, the first at "
                                << outcome.first_bad_index.value_or(0) << ", largest error " << outcome.max_abs_error;
  }
}

// Pieces split the heads (one token) or the tokens differently with the pool's size; every query
// head is computed the same way in any piece.
TEST_P(AttentionCases, AnyPoolSizeGivesTheSameBits) {
  const Case& c = GetParam();
  const Filled filled(c);
  for (const Backend backend : supported_backends()) {
    std::vector<float> first;
    for (const std::size_t threads : {1, 2, 3, 8}) {
      ThreadPool pool(threads);
      const AttentionOp op(filled.cache(), {c.heads, c.kv_heads, c.head_dim}, pool);
      std::vector<float> out(op.output_size(filled.input()));
      op.run(filled.input(), out, backend);
      if (first.empty()) {
        first = out;
      } else {
        EXPECT_EQ(std::memcmp(out.data(), first.data(), out.size() * sizeof(float)), 0)
            << name(backend) << ", " << threads << " threads";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionCases, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace brick::model
