// Random operation sequences against a model that knows tokens, not cells: each claimed cell gets a
// unique token id written into its K and V rows, and the model tracks every live token's position,
// sequence set and pending shift. After every step the cache must hold exactly the model's tokens,
// with their data intact, and answer every query as the model does.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick {
namespace {

struct Token {
  Pos pos;
  std::uint64_t sequences;
  Pos shift;
};

class Model {
 public:
  std::map<int, Token> tokens;

  static bool in_range(Pos pos, Pos p0, Pos p1) { return pos >= (p0 < 0 ? 0 : p0) && (p1 < 0 || pos < p1); }
  static std::uint64_t bit(SeqId s) { return std::uint64_t{1} << s; }

  std::size_t seq_rm(SeqId seq, Pos p0, Pos p1) {
    std::size_t changed = 0;
    for (auto it = tokens.begin(); it != tokens.end();) {
      Token& t = it->second;
      if (in_range(t.pos, p0, p1) && (seq < 0 || (t.sequences & bit(seq)))) {
        ++changed;
        t.sequences = seq < 0 ? 0 : t.sequences & ~bit(seq);
        if (t.sequences == 0) {
          it = tokens.erase(it);
          continue;
        }
      }
      ++it;
    }
    return changed;
  }
  std::size_t seq_cp(SeqId src, SeqId dst, Pos p0, Pos p1) {
    if (src == dst) return 0;
    std::size_t changed = 0;
    for (auto& [id, t] : tokens) {
      if ((t.sequences & bit(src)) && !(t.sequences & bit(dst)) && in_range(t.pos, p0, p1)) {
        t.sequences |= bit(dst);
        ++changed;
      }
    }
    return changed;
  }
  std::size_t seq_keep(SeqId seq) {
    std::size_t changed = 0;
    for (auto it = tokens.begin(); it != tokens.end();) {
      Token& t = it->second;
      if (t.sequences != bit(seq)) {
        ++changed;
        if (!(t.sequences & bit(seq))) {
          it = tokens.erase(it);
          continue;
        }
        t.sequences = bit(seq);
      }
      ++it;
    }
    return changed;
  }
  // nullopt: the cache must refuse (a shared token would move).
  std::optional<std::size_t> seq_add(SeqId seq, Pos p0, Pos p1, Pos delta) {
    if (delta == 0) return 0;
    for (const auto& [id, t] : tokens) {
      if ((t.sequences & bit(seq)) && in_range(t.pos, p0, p1) && t.sequences != bit(seq)) return std::nullopt;
    }
    std::size_t changed = 0;
    for (auto it = tokens.begin(); it != tokens.end();) {
      Token& t = it->second;
      if ((t.sequences & bit(seq)) && in_range(t.pos, p0, p1)) {
        ++changed;
        if (t.pos + delta < 0) {
          it = tokens.erase(it);
          continue;
        }
        t.pos += delta;
        t.shift += delta;
      }
      ++it;
    }
    return changed;
  }
};

int token_at(const KvCache& cache, CellIndex cell) {
  const float k = cache.key_row<float>(0, cell)[0];
  EXPECT_EQ(cache.value_row<float>(cache.shape().n_layers - 1, cell)[cache.shape().row_elements() - 1], -k);
  return static_cast<int>(k);
}

void expect_matches(const KvCache& cache, const Model& model, std::size_t high_water, std::mt19937_64& rng,
                    int step) {
  std::size_t used = 0;
  for (CellIndex c = 0; c < cache.shape().n_cells; ++c) {
    const KvCell& cell = cache.cell(c);
    if (cell.empty()) {
      ASSERT_EQ(cell.pos, -1) << "step " << step;
      continue;
    }
    ++used;
    const auto it = model.tokens.find(token_at(cache, c));
    ASSERT_NE(it, model.tokens.end()) << "step " << step << ": cell " << c << " holds a dead token";
    ASSERT_EQ(cell.pos, it->second.pos) << "step " << step;
    ASSERT_EQ(cell.sequences, it->second.sequences) << "step " << step;
    ASSERT_EQ(cell.shift, it->second.shift) << "step " << step;
  }
  ASSERT_EQ(used, model.tokens.size()) << "step " << step;
  const KvCacheStats s = cache.stats();
  ASSERT_EQ(s.used, used);
  ASSERT_EQ(s.high_water, high_water);
  ASSERT_EQ(s.used + s.free, s.cells);
  for (SeqId seq = 0; seq < 4; ++seq) {
    std::optional<Pos> lo, hi;
    for (const auto& [id, t] : model.tokens) {
      if (!(t.sequences & Model::bit(seq))) continue;
      lo = lo ? std::min(*lo, t.pos) : t.pos;
      hi = hi ? std::max(*hi, t.pos) : t.pos;
    }
    ASSERT_EQ(cache.seq_pos_min(seq), lo) << "step " << step;
    ASSERT_EQ(cache.seq_pos_max(seq), hi) << "step " << step;
  }
  const SeqId seq = static_cast<SeqId>(rng() % 4);
  const Pos query = static_cast<Pos>(rng() % 60);
  const Pos window = static_cast<Pos>(rng() % 3 == 0 ? 0 : rng() % 20 + 1);
  std::set<int> expected, actual;
  for (const auto& [id, t] : model.tokens) {
    if ((t.sequences & Model::bit(seq)) && t.pos <= query && (window == 0 || query - t.pos < window)) {
      expected.insert(id);
    }
  }
  const auto cells = cache.attendable_cells(seq, query, window);
  ASSERT_TRUE(std::is_sorted(cells.begin(), cells.end()));
  for (CellIndex c : cells) actual.insert(token_at(cache, c));
  ASSERT_EQ(actual, expected) << "step " << step;
}

TEST(KvCacheProperty, RandomOperationsAgreeWithTheTokenModel) {
  const KvCacheShape shape{.n_layers = 2, .n_cells = 48, .n_kv_heads = 1, .head_dim = 4, .type = KvType::F32};
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    KvCache cache(shape);
    Model model;
    int next_id = 1;
    std::size_t high_water = 0;
    auto random_pos = [&] { return static_cast<Pos>(rng() % 8 == 0 ? -1 : static_cast<Pos>(rng() % 50)); };
    for (int step = 0; step < 3000; ++step) {
      const SeqId seq = static_cast<SeqId>(rng() % 4);
      switch (rng() % 10) {
        case 0:
        case 1:
        case 2: {
          const std::size_t n = rng() % 6 + 1;
          std::vector<Pos> positions(n);
          const Pos first = static_cast<Pos>(rng() % 40);
          for (std::size_t i = 0; i < n; ++i) positions[i] = first + static_cast<Pos>(i);
          const auto placement = rng() % 2 ? Placement::Contiguous : Placement::Scattered;
          const KvCacheStats before = cache.stats();
          const bool fits = placement == Placement::Contiguous ? before.largest_free_run >= n : before.free >= n;
          std::vector<bool> was_empty(shape.n_cells);
          for (CellIndex c = 0; c < shape.n_cells; ++c) was_empty[c] = cache.cell(c).empty();
          const auto slot = cache.find_slot(seq, positions, placement);
          ASSERT_EQ(slot.has_value(), fits) << "step " << step;
          if (!slot) break;
          ASSERT_EQ(slot->cells.size(), n);
          for (std::size_t i = 0; i < n; ++i) {
            ASSERT_TRUE(was_empty[slot->cells[i]]) << "step " << step << ": overwrote cell " << slot->cells[i];
            if (placement == Placement::Contiguous && i > 0) {
              ASSERT_EQ(slot->cells[i], slot->cells[i - 1] + 1);
            }
          }
          std::vector<float> k(n * 4), v(n * 4);
          for (std::size_t i = 0; i < n; ++i) {
            const int id = next_id++;
            std::fill_n(k.begin() + static_cast<std::ptrdiff_t>(i * 4), 4, static_cast<float>(id));
            std::fill_n(v.begin() + static_cast<std::ptrdiff_t>(i * 4), 4, -static_cast<float>(id));
            model.tokens[id] = Token{positions[i], Model::bit(seq), 0};
          }
          for (std::size_t layer = 0; layer < shape.n_layers; ++layer) cache.write(layer, slot->cells, k, v);
          high_water = std::max(high_water, model.tokens.size());
          break;
        }
        case 3:
        case 4: {
          const SeqId target = rng() % 5 == 0 ? -1 : seq;
          const Pos p0 = random_pos(), p1 = random_pos();
          ASSERT_EQ(cache.seq_rm(target, p0, p1), model.seq_rm(target, p0, p1)) << "step " << step;
          break;
        }
        case 5:
        case 6: {
          const SeqId dst = static_cast<SeqId>(rng() % 4);
          const Pos p0 = random_pos(), p1 = random_pos();
          ASSERT_EQ(cache.seq_cp(seq, dst, p0, p1), model.seq_cp(seq, dst, p0, p1)) << "step " << step;
          break;
        }
        case 7: {
          const Pos p0 = random_pos(), p1 = random_pos();
          const Pos delta = static_cast<Pos>(rng() % 21) - 10;
          const auto expected = model.seq_add(seq, p0, p1, delta);
          if (expected) {
            ASSERT_EQ(cache.seq_add(seq, p0, p1, delta), *expected) << "step " << step;
          } else {
            ASSERT_THROW(cache.seq_add(seq, p0, p1, delta), StateError) << "step " << step;
          }
          break;
        }
        case 8:
          if (rng() % 8 == 0) {
            ASSERT_EQ(cache.seq_keep(seq), model.seq_keep(seq));
          }
          if (rng() % 4 == 0) {
            cache.clear_pending_shifts();
            for (auto& [id, t] : model.tokens) t.shift = 0;
          }
          break;
        case 9:
          if (rng() % 50 == 0) {
            cache.clear();
            model.tokens.clear();
            high_water = 0;
          }
          break;
      }
      expect_matches(cache, model, high_water, rng, step);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace brick
