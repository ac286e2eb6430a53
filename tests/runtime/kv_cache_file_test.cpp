#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick {
namespace {

constexpr std::size_t kHeaderBytes = 56;
constexpr std::size_t kCellRecordBytes = 16;

KvCacheShape shape_with(std::size_t cells, KvType type = KvType::F32) {
  return KvCacheShape{.n_layers = 3, .n_cells = cells, .n_kv_heads = 2, .head_dim = 8, .type = type};
}

// A cache with shared, shifted and partly freed sequences and distinct data in every written row.
void populate(KvCache& cache) {
  std::vector<Pos> positions(6);
  std::iota(positions.begin(), positions.end(), 0);
  const auto prompt = cache.find_slot(0, positions, Placement::Contiguous);
  ASSERT_TRUE(prompt);
  const std::size_t row = cache.shape().row_elements();
  for (std::size_t layer = 0; layer < cache.shape().n_layers; ++layer) {
    std::vector<float> k(6 * row), v(6 * row);
    for (std::size_t i = 0; i < k.size(); ++i) {
      k[i] = static_cast<float>(layer * 1000 + i) + 0.25f;
      v[i] = -static_cast<float>(layer * 1000 + i);
    }
    cache.write(layer, prompt->cells, k, v);
  }
  cache.seq_cp(0, 3, 0, 4);
  cache.seq_rm(0, 4, 5);
  cache.seq_add(0, 5, -1, -1);
}

std::vector<char> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct State {
  std::vector<KvCell> cells;
  std::vector<float> data;
  KvCacheStats stats;
};

State state_of(const KvCache& cache) {
  State s;
  for (CellIndex c = 0; c < cache.shape().n_cells; ++c) s.cells.push_back(cache.cell(c));
  for (std::size_t layer = 0; layer < cache.shape().n_layers; ++layer) {
    for (float x : cache.keys<float>(layer)) s.data.push_back(x);
    for (float x : cache.values<float>(layer)) s.data.push_back(x);
  }
  s.stats = cache.stats();
  return s;
}

void expect_same(const State& a, const State& b) {
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (std::size_t i = 0; i < a.cells.size(); ++i) {
    EXPECT_EQ(a.cells[i].pos, b.cells[i].pos) << "cell " << i;
    EXPECT_EQ(a.cells[i].sequences, b.cells[i].sequences) << "cell " << i;
    EXPECT_EQ(a.cells[i].shift, b.cells[i].shift) << "cell " << i;
  }
  EXPECT_EQ(a.data, b.data);
  EXPECT_EQ(a.stats.used, b.stats.used);
  EXPECT_EQ(a.stats.high_water, b.stats.high_water);
}

class KvCacheFile : public ::testing::Test {
 protected:
  KvCacheFile()
      : dir_(std::filesystem::temp_directory_path() /
             ("brick_kv_cache_" + std::to_string(getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        file_(dir_ / "cache.bkv"),
        bad_(dir_ / "bad.bkv") {}

  void SetUp() override {
    std::filesystem::create_directories(dir_);
    populate(source_);
    source_.save(file_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A live cache with other contents, so that "unchanged" is observable.
  KvCache live_cache() {
    KvCache cache(shape_with(16));
    std::vector<Pos> positions = {7, 8};
    const auto slot = cache.find_slot(9, positions, Placement::Scattered);
    EXPECT_TRUE(slot);
    std::vector<float> rows(2 * cache.shape().row_elements(), 3.5f);
    cache.write(1, slot->cells, rows, rows);
    return cache;
  }

  void expect_rejected_unchanged(const std::vector<char>& bytes, const std::string& message_part) {
    write_all(bad_, bytes);
    KvCache cache = live_cache();
    const State before = state_of(cache);
    try {
      cache.restore(bad_);
      ADD_FAILURE() << "accepted a bad file (" << message_part << ")";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
    }
    expect_same(before, state_of(cache));
  }

  std::filesystem::path dir_;
  std::filesystem::path file_;
  std::filesystem::path bad_;
  KvCache source_{shape_with(16)};
};

TEST_F(KvCacheFile, RoundTripRestoresCellsDataAndStats) {
  EXPECT_EQ(std::filesystem::file_size(file_),
            kHeaderBytes + 16 * kCellRecordBytes + 3 * 2 * 16 * 16 * sizeof(float) + 8);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "cache.bkv.tmp"));
  KvCache cache = live_cache();
  cache.restore(file_);
  expect_same(state_of(source_), state_of(cache));
  EXPECT_TRUE(cache.has_pending_shift());
  EXPECT_EQ(cache.seq_pos_max(3), 3);
  EXPECT_EQ(cache.attendable_cells(0, 10).size(), 5u);
}

TEST_F(KvCacheFile, F16CacheRoundTrips) {
  KvCache f16(shape_with(4, KvType::F16));
  std::vector<Pos> positions = {0};
  const auto slot = f16.find_slot(1, positions, Placement::Contiguous);
  ASSERT_TRUE(slot);
  std::vector<std::uint16_t> row(16);
  std::iota(row.begin(), row.end(), std::uint16_t{0x7C00});
  f16.write(2, slot->cells, row, row);
  f16.save(dir_ / "f16.bkv");
  KvCache restored(shape_with(4, KvType::F16));
  restored.restore(dir_ / "f16.bkv");
  const auto k = restored.key_row<std::uint16_t>(2, slot->cells[0]);
  EXPECT_TRUE(std::equal(k.begin(), k.end(), row.begin(), row.end()));
  EXPECT_EQ(restored.cell(slot->cells[0]).sequences, 2u);
  // An f16 file does not restore into an f32 cache of the same dimensions.
  KvCache f32(shape_with(4));
  EXPECT_THROW(f32.restore(dir_ / "f16.bkv"), FormatError);
}

TEST_F(KvCacheFile, EveryCorruptedByteIsCaughtAndNothingChanges) {
  const std::vector<char> good = read_all(file_);
  const std::size_t data = kHeaderBytes + 16 * kCellRecordBytes;
  for (std::size_t offset : {std::size_t{0}, std::size_t{7}, std::size_t{8}, std::size_t{12}, std::size_t{20},
                             std::size_t{48}, kHeaderBytes, kHeaderBytes + 5 * kCellRecordBytes + 9, data,
                             data + 1000, good.size() - 9, good.size() - 1}) {
    std::vector<char> bad = good;
    bad[offset] = static_cast<char>(bad[offset] ^ 0x10);
    SCOPED_TRACE("offset " + std::to_string(offset));
    expect_rejected_unchanged(bad, "KvCache::restore");
  }
}

TEST_F(KvCacheFile, SpecificDefectsGetSpecificMessages) {
  const std::vector<char> good = read_all(file_);
  std::vector<char> bad = good;
  bad[0] = 'X';
  expect_rejected_unchanged(bad, "bad magic");
  bad = good;
  bad[8] = 9;
  expect_rejected_unchanged(bad, "format version 9");
  bad = good;
  bad[good.size() / 2] ^= 1;
  expect_rejected_unchanged(bad, "corrupted");
  expect_rejected_unchanged({good.begin(), good.end() - 1}, "truncated");
  expect_rejected_unchanged({good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2)}, "truncated");
  expect_rejected_unchanged({good.begin(), good.begin() + 10}, "shorter than the 56-byte header");
  expect_rejected_unchanged({}, "shorter than the 56-byte header");
  bad = good;
  bad.push_back(0);
  expect_rejected_unchanged(bad, "trailing bytes");
}

TEST_F(KvCacheFile, InconsistentCellWithAValidChecksumIsRejected) {
  std::vector<char> bad = read_all(file_);
  // Cell 15 is empty; give it a position but no sequence, then re-seal the checksum.
  const std::size_t record = kHeaderBytes + 15 * kCellRecordBytes;
  const std::int32_t pos = 4;
  std::memcpy(bad.data() + record, &pos, sizeof pos);
  const std::uint64_t checksum = XXH3_64bits(bad.data(), bad.size() - 8);
  std::memcpy(bad.data() + bad.size() - 8, &checksum, sizeof checksum);
  expect_rejected_unchanged(bad, "cell 15 is inconsistent");
}

TEST_F(KvCacheFile, ShapeMismatchIsAFormatErrorNamingBothShapes) {
  KvCache other(shape_with(8));
  try {
    other.restore(file_);
    FAIL();
  } catch (const FormatError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cells=16"), std::string::npos) << message;
    EXPECT_NE(message.find("cells=8"), std::string::npos) << message;
  }
  EXPECT_EQ(other.stats().used, 0u);
}

TEST_F(KvCacheFile, OsFailuresAreIoErrors) {
  KvCache cache = live_cache();
  const State before = state_of(cache);
  EXPECT_THROW(cache.restore(dir_ / "missing.bkv"), IoError);
  expect_same(before, state_of(cache));
  try {
    cache.save(dir_ / "no_such_dir" / "cache.bkv");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
  // Saving over an existing file replaces it whole.
  cache.save(file_);
  KvCache copy(shape_with(16));
  copy.restore(file_);
  expect_same(before, state_of(copy));
}

}  // namespace
}  // namespace brick
