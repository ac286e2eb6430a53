#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick {
namespace {

KvCacheShape small_shape(std::size_t cells = 8, KvType type = KvType::F32) {
  return KvCacheShape{.n_layers = 2, .n_cells = cells, .n_kv_heads = 2, .head_dim = 4, .type = type};
}

std::vector<Pos> iota_positions(Pos first, std::size_t n) {
  std::vector<Pos> positions(n);
  std::iota(positions.begin(), positions.end(), first);
  return positions;
}

std::vector<CellIndex> cells_of(const KvCache& cache, SeqId seq) {
  std::vector<CellIndex> cells;
  for (CellIndex i = 0; i < cache.shape().n_cells; ++i) {
    if (cache.cell(i).has(seq)) cells.push_back(i);
  }
  return cells;
}

std::vector<KvCell> snapshot(const KvCache& cache) {
  std::vector<KvCell> cells;
  for (CellIndex i = 0; i < cache.shape().n_cells; ++i) cells.push_back(cache.cell(i));
  return cells;
}

bool same_cells(const std::vector<KvCell>& a, const std::vector<KvCell>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].pos != b[i].pos || a[i].sequences != b[i].sequences || a[i].shift != b[i].shift) return false;
  }
  return true;
}

TEST(KvCache, AllocatesEveryCellOnceZeroFilled) {
  const KvCache cache(small_shape());
  EXPECT_EQ(cache.shape().row_elements(), 8u);
  EXPECT_EQ(cache.keys<float>(1).size(), 8u * 8u);
  for (float x : cache.values<float>(0)) EXPECT_EQ(x, 0.0f);
  const KvCacheStats s = cache.stats();
  EXPECT_EQ(s.cells, 8u);
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.free, 8u);
  EXPECT_EQ(s.largest_free_run, 8u);
  EXPECT_EQ(s.free_runs, 1u);
  EXPECT_EQ(s.fragmentation, 0.0);
  EXPECT_EQ(s.used_extent, 0u);
  for (CellIndex i = 0; i < 8; ++i) EXPECT_EQ(cache.cell(i).pos, -1);
}

TEST(KvCache, BadShapesAreInvalidArguments) {
  for (auto mutate : {+[](KvCacheShape& s) { s.n_layers = 0; }, +[](KvCacheShape& s) { s.n_cells = 0; },
                      +[](KvCacheShape& s) { s.n_kv_heads = 0; }, +[](KvCacheShape& s) { s.head_dim = 0; },
                      +[](KvCacheShape& s) { s.type = static_cast<KvType>(7); },
                      +[](KvCacheShape& s) { s.n_cells = std::size_t{1} << 33; },
                      +[](KvCacheShape& s) { s.head_dim = SIZE_MAX / 2; }}) {
    KvCacheShape shape = small_shape();
    mutate(shape);
    EXPECT_THROW(KvCache{shape}, InvalidArgument);
  }
}

TEST(KvCache, ACacheLargerThanMemoryIsACapacityErrorNamingTheSize) {
  // 2^32 - 1 cells of 8 MiB rows: past any machine's memory, refused before anything is allocated.
  const KvCacheShape huge{.n_layers = 1, .n_cells = 0xFFFFFFFFu, .n_kv_heads = 1024, .head_dim = 2048,
                          .type = KvType::F32};
  try {
    KvCache cache(huge);
    FAIL() << "a cache of " << huge.n_cells << " cells was allocated";
  } catch (const CapacityError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("KvCache: 72057"), std::string::npos) << message;  // K and V plus the cells
    EXPECT_NE(message.find("more than this machine's"), std::string::npos) << message;
  }
}

TEST(KvCache, ContiguousSlotIsFirstFitAndRecordsMetadata) {
  KvCache cache(small_shape());
  const auto positions = iota_positions(10, 3);
  const auto slot = cache.find_slot(2, positions, Placement::Contiguous);
  ASSERT_TRUE(slot);
  EXPECT_EQ(slot->cells, (std::vector<CellIndex>{0, 1, 2}));
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cache.cell(slot->cells[i]).pos, positions[i]);
    EXPECT_EQ(cache.cell(slot->cells[i]).sequences, std::uint64_t{1} << 2);
  }
  EXPECT_EQ(cache.stats().used, 3u);
  EXPECT_EQ(cache.stats().used_extent, 3u);
  EXPECT_EQ(cache.seq_pos_min(2), 10);
  EXPECT_EQ(cache.seq_pos_max(2), 12);
  EXPECT_EQ(cache.seq_pos_min(3), std::nullopt);
}

TEST(KvCache, FragmentationMakesContiguousFailWhereScatteredFits) {
  KvCache cache(small_shape());
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 8), Placement::Contiguous));
  EXPECT_EQ(cache.find_slot(1, iota_positions(0, 1), Placement::Scattered), std::nullopt);  // full
  // Free the cells holding positions 1, 3 and 5: three holes of one cell.
  for (Pos p : {1, 3, 5}) cache.seq_rm(0, p, p + 1);
  KvCacheStats s = cache.stats();
  EXPECT_EQ(s.free, 3u);
  EXPECT_EQ(s.free_runs, 3u);
  EXPECT_EQ(s.largest_free_run, 1u);
  EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - 1.0 / 3.0);
  EXPECT_EQ(s.high_water, 8u);

  const auto before = snapshot(cache);
  EXPECT_EQ(cache.find_slot(1, iota_positions(0, 2), Placement::Contiguous), std::nullopt);
  EXPECT_EQ(cache.find_slot(1, iota_positions(0, 4), Placement::Scattered), std::nullopt);
  EXPECT_TRUE(same_cells(before, snapshot(cache)));  // a failure changes nothing
  const auto slot = cache.find_slot(1, iota_positions(0, 2), Placement::Scattered);
  ASSERT_TRUE(slot);
  EXPECT_EQ(slot->cells, (std::vector<CellIndex>{1, 3}));
  s = cache.stats();
  EXPECT_EQ(s.used, 7u);
  EXPECT_EQ(s.fragmentation, 0.0);  // one free cell is one run
}

TEST(KvCache, FindSlotRejectsBadRequests) {
  KvCache cache(small_shape());
  const std::vector<Pos> none;
  EXPECT_THROW(cache.find_slot(0, none, Placement::Contiguous), InvalidArgument);
  EXPECT_THROW(cache.find_slot(64, iota_positions(0, 1), Placement::Contiguous), InvalidArgument);
  EXPECT_THROW(cache.find_slot(-1, iota_positions(0, 1), Placement::Contiguous), InvalidArgument);
  EXPECT_THROW(cache.find_slot(0, std::vector<Pos>{0, -3}, Placement::Scattered), InvalidArgument);
  EXPECT_EQ(cache.find_slot(0, iota_positions(0, 9), Placement::Scattered), std::nullopt);
  EXPECT_THROW(cache.find_slot(0, iota_positions(0, 1), static_cast<Placement>(7)), InvalidArgument);
  EXPECT_EQ(cache.stats().used, 0u);
}

TEST(KvCache, WritesAndReadsF32Rows) {
  KvCache cache(small_shape());
  const auto slot = cache.find_slot(0, iota_positions(0, 2), Placement::Contiguous);
  ASSERT_TRUE(slot);
  std::vector<float> k(16), v(16);
  std::iota(k.begin(), k.end(), 1.0f);
  std::iota(v.begin(), v.end(), -100.0f);
  cache.write(1, slot->cells, k, v);
  const auto k1 = cache.key_row<float>(1, slot->cells[1]);
  ASSERT_EQ(k1.size(), 8u);
  EXPECT_EQ(k1[0], 9.0f);
  EXPECT_EQ(k1[7], 16.0f);
  EXPECT_EQ(cache.value_row<float>(1, slot->cells[0])[3], -97.0f);
  for (float x : cache.keys<float>(0)) EXPECT_EQ(x, 0.0f);  // other layer untouched
  EXPECT_THROW(cache.keys<std::uint16_t>(0), InvalidArgument);
}

TEST(KvCache, WritesAndReadsF16BitsExactly) {
  KvCache cache(small_shape(8, KvType::F16));
  const auto slot = cache.find_slot(5, iota_positions(0, 1), Placement::Scattered);
  ASSERT_TRUE(slot);
  // Raw binary16 bits, including a NaN payload, -0 and a subnormal: stored untouched.
  const std::vector<std::uint16_t> k = {0x3C00, 0x7E01, 0x8000, 0x0001, 0x7BFF, 0xFC00, 0x1234, 0xFFFF};
  const std::vector<std::uint16_t> v(8, 0xC000);
  cache.write(0, slot->cells, k, v);
  const auto row = cache.key_row<std::uint16_t>(0, slot->cells[0]);
  EXPECT_TRUE(std::equal(row.begin(), row.end(), k.begin(), k.end()));
  EXPECT_EQ(cache.value_row<std::uint16_t>(0, slot->cells[0])[7], 0xC000);
  const std::vector<float> f(8, 1.0f);
  EXPECT_THROW(cache.write(0, slot->cells, f, f), InvalidArgument);
  EXPECT_THROW(cache.key_row<float>(0, 0), InvalidArgument);
}

TEST(KvCache, BadWritesAreRejectedWholeAndTyped) {
  KvCache cache(small_shape());
  const auto slot = cache.find_slot(0, iota_positions(0, 1), Placement::Contiguous);
  ASSERT_TRUE(slot);
  const std::vector<float> row(8, 7.0f), two_rows(16, 7.0f);
  EXPECT_THROW(cache.write(2, slot->cells, row, row), InvalidArgument);                   // layer
  EXPECT_THROW(cache.write(0, slot->cells, two_rows, row), InvalidArgument);              // size
  EXPECT_THROW(cache.write(0, std::vector<CellIndex>{8}, row, row), InvalidArgument);     // cell index
  // Cell 0 is claimed, cell 5 is not: the whole write is refused, cell 0 keeps its zeros.
  EXPECT_THROW(cache.write(0, std::vector<CellIndex>{0, 5}, two_rows, two_rows), StateError);
  EXPECT_EQ(cache.key_row<float>(0, 0)[0], 0.0f);
  EXPECT_THROW(cache.cell(8), InvalidArgument);
  EXPECT_THROW(cache.key_row<float>(0, 8), InvalidArgument);
}

TEST(KvCache, SeqRmFollowsLlamaCppBounds) {
  KvCache cache(small_shape());
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 4), Placement::Contiguous));
  ASSERT_TRUE(cache.find_slot(1, iota_positions(0, 4), Placement::Contiguous));
  EXPECT_EQ(cache.seq_rm(0, 2, -1), 2u);  // [2, inf)
  EXPECT_EQ(cache.seq_pos_max(0), 1);
  EXPECT_EQ(cache.seq_rm(1, -1, 1), 1u);  // [0, 1)
  EXPECT_EQ(cache.seq_pos_min(1), 1);
  EXPECT_EQ(cache.seq_rm(1, 5, 9), 0u);
  EXPECT_EQ(cache.stats().used, 5u);
  EXPECT_EQ(cache.seq_rm(-1, 1, 2), 2u);  // every sequence at position 1
  EXPECT_EQ(cache.stats().used, 3u);
  EXPECT_EQ(cache.seq_rm(-1, -1, -1), 3u);
  EXPECT_EQ(cache.stats().used, 0u);
  EXPECT_EQ(cache.stats().high_water, 8u);
  EXPECT_THROW(cache.seq_rm(64, 0, 1), InvalidArgument);
}

TEST(KvCache, SharedPrefixIsStoredOnce) {
  KvCache cache(small_shape(16));
  const auto prompt = cache.find_slot(0, iota_positions(0, 4), Placement::Contiguous);
  ASSERT_TRUE(prompt);
  std::vector<float> k(32, 1.0f), v(32, 2.0f);
  cache.write(0, prompt->cells, k, v);
  EXPECT_EQ(cache.seq_cp(0, 1, -1, -1), 4u);
  EXPECT_EQ(cache.seq_cp(0, 2, 0, 2), 2u);  // only the first two tokens
  EXPECT_EQ(cache.seq_cp(0, 1, -1, -1), 0u);  // already shared
  EXPECT_EQ(cache.seq_cp(3, 3, -1, -1), 0u);
  EXPECT_EQ(cache.stats().used, 4u);
  // Each sequence continues on its own cells.
  const auto next1 = cache.find_slot(1, iota_positions(4, 1), Placement::Contiguous);
  const auto next2 = cache.find_slot(2, iota_positions(2, 1), Placement::Contiguous);
  ASSERT_TRUE(next1 && next2);
  EXPECT_EQ(cache.attendable_cells(1, 4), (std::vector<CellIndex>{0, 1, 2, 3, next1->cells[0]}));
  EXPECT_EQ(cache.attendable_cells(2, 2), (std::vector<CellIndex>{0, 1, next2->cells[0]}));
  EXPECT_EQ(cache.attendable_cells(0, 3), (std::vector<CellIndex>{0, 1, 2, 3}));
  // Dropping sequence 0 keeps the prefix for the others.
  EXPECT_EQ(cache.seq_rm(0, -1, -1), 4u);
  EXPECT_EQ(cache.stats().used, 6u);
  EXPECT_EQ(cache.key_row<float>(0, 0)[0], 1.0f);
  EXPECT_EQ(cache.seq_pos_min(0), std::nullopt);
  EXPECT_EQ(cache.seq_pos_min(1), 0);
}

TEST(KvCache, SeqKeepDropsEveryOtherSequence) {
  KvCache cache(small_shape());
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 3), Placement::Contiguous));
  cache.seq_cp(0, 1, -1, -1);
  ASSERT_TRUE(cache.find_slot(2, iota_positions(0, 2), Placement::Contiguous));
  EXPECT_EQ(cache.seq_keep(1), 5u);  // 3 shared cells narrowed, 2 cells of seq 2 freed
  EXPECT_EQ(cache.stats().used, 3u);
  for (CellIndex c : cells_of(cache, 1)) EXPECT_EQ(cache.cell(c).sequences, std::uint64_t{1} << 1);
  EXPECT_TRUE(cells_of(cache, 0).empty());
  EXPECT_EQ(cache.seq_keep(1), 0u);
}

TEST(KvCache, SeqAddShiftsPositionsRecordsTheShiftAndRemovesBelowZero) {
  KvCache cache(small_shape());
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 6), Placement::Contiguous));
  // Context shift: drop [1, 3), move [3, inf) down by 2.
  EXPECT_EQ(cache.seq_rm(0, 1, 3), 2u);
  EXPECT_EQ(cache.seq_add(0, 3, -1, -2), 3u);
  std::vector<Pos> positions;
  for (CellIndex c : cells_of(cache, 0)) positions.push_back(cache.cell(c).pos);
  EXPECT_EQ(positions, (std::vector<Pos>{0, 1, 2, 3}));
  EXPECT_TRUE(cache.has_pending_shift());
  EXPECT_EQ(cache.cell(3).shift, -2);
  EXPECT_EQ(cache.cell(0).shift, 0);
  cache.clear_pending_shifts();
  EXPECT_FALSE(cache.has_pending_shift());
  // Shifting below zero removes the cells.
  EXPECT_EQ(cache.seq_add(0, -1, -1, -2), 4u);
  EXPECT_EQ(cache.stats().used, 2u);
  EXPECT_EQ(cache.seq_pos_min(0), 0);
  EXPECT_EQ(cache.seq_add(0, -1, -1, 0), 0u);
}

TEST(KvCache, SeqAddRefusesToMoveASharedCell) {
  KvCache cache(small_shape());
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 4), Placement::Contiguous));
  cache.seq_cp(0, 1, 2, 3);
  const auto before = snapshot(cache);
  try {
    cache.seq_add(0, -1, -1, 5);
    FAIL();
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("cell 2"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(same_cells(before, snapshot(cache)));
  EXPECT_EQ(cache.seq_add(0, 3, -1, 5), 1u);  // the unshared tail may move
  EXPECT_THROW(cache.seq_add(0, -1, -1, std::numeric_limits<Pos>::max()), InvalidArgument);
}

TEST(KvCache, AttendableCellsHonourPositionAndSlidingWindow) {
  KvCache cache(small_shape(16));
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 10), Placement::Contiguous));
  ASSERT_TRUE(cache.find_slot(1, iota_positions(0, 3), Placement::Contiguous));
  EXPECT_EQ(cache.attendable_cells(0, 4), (std::vector<CellIndex>{0, 1, 2, 3, 4}));
  EXPECT_EQ(cache.attendable_cells(0, 100).size(), 10u);
  EXPECT_EQ(cache.attendable_cells(0, 9, 3), (std::vector<CellIndex>{7, 8, 9}));  // 9 - pos < 3
  EXPECT_EQ(cache.attendable_cells(0, 9, 1), (std::vector<CellIndex>{9}));
  EXPECT_EQ(cache.attendable_cells(1, 1), (std::vector<CellIndex>{10, 11}));
  EXPECT_TRUE(cache.attendable_cells(5, 3).empty());
  std::vector<CellIndex> out = {99, 98};
  cache.attendable_cells(0, 0, 0, out);
  EXPECT_EQ(out, (std::vector<CellIndex>{0}));
  EXPECT_THROW(cache.attendable_cells(0, -1), InvalidArgument);
  EXPECT_THROW(cache.attendable_cells(0, 3, -2), InvalidArgument);
  EXPECT_THROW(cache.attendable_cells(70, 3), InvalidArgument);
}

TEST(KvCache, ClearEmptiesEverythingAndResetsHighWater) {
  KvCache cache(small_shape());
  ASSERT_TRUE(cache.find_slot(0, iota_positions(0, 5), Placement::Contiguous));
  cache.clear();
  const KvCacheStats s = cache.stats();
  EXPECT_EQ(s.used, 0u);
  EXPECT_EQ(s.high_water, 0u);
  EXPECT_EQ(cache.seq_pos_max(0), std::nullopt);
  EXPECT_TRUE(cache.find_slot(0, iota_positions(0, 8), Placement::Contiguous));
}

TEST(KvCache, UnknownSequenceIdsAreInvalidEverywhere) {
  KvCache cache(small_shape());
  EXPECT_THROW(cache.seq_cp(0, 64, -1, -1), InvalidArgument);
  EXPECT_THROW(cache.seq_cp(-1, 0, -1, -1), InvalidArgument);
  EXPECT_THROW(cache.seq_keep(100), InvalidArgument);
  EXPECT_THROW(cache.seq_add(-2, 0, 1, 1), InvalidArgument);
  EXPECT_THROW(cache.seq_pos_min(64), InvalidArgument);
  EXPECT_THROW(cache.seq_pos_max(-1), InvalidArgument);
  EXPECT_THROW(cache.seq_rm(64, -1, -1), InvalidArgument);
}

}  // namespace
}  // namespace brick
