#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "runtime/child_process.hpp"

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

// Gives cell `index` a record with the checksum re-sealed, so that only the record itself is wrong.
std::vector<char> with_cell(std::vector<char> bytes, std::size_t index, std::int32_t pos, std::int32_t shift,
                            std::uint64_t sequences) {
  char* record = bytes.data() + kHeaderBytes + index * kCellRecordBytes;
  std::memcpy(record, &pos, sizeof pos);
  std::memcpy(record + 4, &shift, sizeof shift);
  std::memcpy(record + 8, &sequences, sizeof sequences);
  const std::uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size() - 8);
  std::memcpy(bytes.data() + bytes.size() - 8, &checksum, sizeof checksum);
  return bytes;
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
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1) << "a temporary was left behind";
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
  // Cell 15 is empty; give it a position but no sequence.
  expect_rejected_unchanged(with_cell(read_all(file_), 15, 4, 0, 0), "cell 15 is inconsistent");
}

// A shift is what seq_add moved a cell by since its K was last rotated: position - shift is the
// position it was written at, which must itself be a position. Accepting shift INT32_MAX at
// position 7 let a later seq_add overflow it.
TEST_F(KvCacheFile, ACellWhoseShiftNoPositionCouldHaveIsRejected) {
  const std::vector<char> good = read_all(file_);
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  expect_rejected_unchanged(with_cell(good, 15, 7, kMax, 0x2), "cell 15 is inconsistent");
  expect_rejected_unchanged(with_cell(good, 15, 7, 8, 0x2), "was position -1 before shifting");
  expect_rejected_unchanged(with_cell(good, 15, 0, -kMax - 1, 0x2), "cell 15 is inconsistent");
  // Shifts seq_add can reach are accepted and shift back: written at 0 and moved far up, and the
  // other way round. (Ranges end before INT32_MAX, as in llama.cpp, so the tests stay below it.)
  KvCache cache(shape_with(16));
  write_all(bad_, with_cell(good, 15, kMax - 1, kMax - 1, 0x2));
  cache.restore(bad_);
  EXPECT_EQ(cache.cell(15).shift, kMax - 1);
  EXPECT_EQ(cache.seq_add(1, -1, -1, -(kMax - 1)), 1u);
  EXPECT_EQ(cache.cell(15).pos, 0);
  EXPECT_EQ(cache.cell(15).shift, 0);
  write_all(bad_, with_cell(good, 15, 0, -(kMax - 1), 0x2));
  cache.restore(bad_);
  EXPECT_EQ(cache.seq_add(1, -1, -1, kMax - 1), 1u);
  EXPECT_EQ(cache.cell(15).pos, kMax - 1);
  EXPECT_EQ(cache.cell(15).shift, 0);
  EXPECT_THROW(cache.seq_add(1, -1, -1, 2), InvalidArgument) << "position INT32_MAX + 1";
  EXPECT_EQ(cache.cell(15).pos, kMax - 1);
}

TEST_F(KvCacheFile, AnUnknownTypeIsNamedAsSuchNextToThisCachesShape) {
  std::vector<char> bad = read_all(file_);
  const std::uint32_t type = 7;
  std::memcpy(bad.data() + 12, &type, sizeof type);
  expect_rejected_unchanged(bad, "holds a cache of unknown type 7 layers=3 cells=16 kv_heads=2 head_dim=8, this "
                                 "cache is f32 layers=3");
}

TEST_F(KvCacheFile, RestoringAFifoOrADirectoryIsAnIoErrorWithoutBlocking) {
  const std::filesystem::path fifo = dir_ / "fifo.bkv";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const auto refused = [&](const std::filesystem::path& path, const std::string& kind) {
    return [&, path, kind] {
      KvCache cache = live_cache();
      const State before = state_of(cache);
      try {
        cache.restore(path);
      } catch (const IoError& e) {
        if (std::string(e.what()).find(kind) == std::string::npos) return 2;
        return state_of(cache).cells.size() == before.cells.size() && state_of(cache).data == before.data ? 0 : 3;
      }
      return 1;
    };
  };
  // A plain open() of a FIFO waits for a writer forever: the restore runs in a child with a deadline.
  EXPECT_EQ(test::run_in_child(10, refused(fifo, "it is a FIFO")), "exit 0");
  EXPECT_EQ(test::run_in_child(10, refused(dir_, "it is a directory")), "exit 0");
}

// Another process truncating the file (or cp-ing over it) while it is restored must give a typed
// error and leave the cache as it was: a mapping of the file raised SIGBUS here instead. The
// truncation is started the moment restore() opens the file (inotify IN_OPEN) and lands while the
// file is read; the rounds run in a child with a deadline, so a crash or hang fails this test.
TEST_F(KvCacheFile, AFileTruncatedWhileItIsRestoredIsATypedErrorNotACrash) {
  const KvCacheShape big{.n_layers = 4, .n_cells = 4096, .n_kv_heads = 4, .head_dim = 128, .type = KvType::F16};
  const std::filesystem::path path = dir_ / "big.bkv";
  const std::string outcome = test::run_in_child(120, [&] {
    KvCache source(big);
    const std::vector<Pos> positions{0, 1, 2};
    source.find_slot(0, positions, Placement::Contiguous);
    KvCache target(big);
    for (int round = 0; round < 4; ++round) {
      source.save(path);
      const int watch = inotify_init1(IN_CLOEXEC);
      if (watch < 0 || inotify_add_watch(watch, path.c_str(), IN_OPEN) < 0) return 10;
      std::thread truncator([&] {
        alignas(inotify_event) char event[sizeof(inotify_event) + 256];
        if (read(watch, event, sizeof event) > 0) truncate(path.c_str(), 4096);
      });
      try {
        target.restore(path);
        if (target.stats().used != 3) return 4;  // restored whole
      } catch (const IoError&) {
        if (target.stats().used != 0) return 5;  // unchanged
      } catch (const FormatError&) {
        if (target.stats().used != 0) return 5;
      }
      truncator.join();
      close(watch);
      target.clear();
    }
    return 0;
  });
  EXPECT_EQ(outcome, "exit 0");
}

TEST_F(KvCacheFile, ASymlinkWhereTheOldTemporaryWentIsNeverFollowed) {
  const std::filesystem::path victim = dir_ / "victim.txt";
  write_all(victim, {'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'});
  std::filesystem::path link = file_;
  link += ".tmp";
  std::filesystem::create_symlink(victim, link);
  source_.save(file_);
  EXPECT_EQ(read_all(victim), (std::vector<char>{'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'}));
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  KvCache copy(shape_with(16));
  copy.restore(file_);
  expect_same(state_of(source_), state_of(copy));
}

TEST_F(KvCacheFile, SaveErrorsNameThePathOnceWithTheReason) {
  try {
    source_.save(dir_);
    FAIL() << "saved over a directory";
  } catch (const IoError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("it is a directory"), std::string::npos) << message;
    EXPECT_EQ(message.find(".tmp"), std::string::npos) << message;
  }
  const std::filesystem::path cwd_temporary = std::filesystem::current_path() / ".tmp";
  const bool existed = std::filesystem::exists(cwd_temporary);
  EXPECT_THROW(source_.save(""), InvalidArgument);
  EXPECT_EQ(std::filesystem::exists(cwd_temporary), existed) << "save(\"\") wrote ./.tmp";
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
