// libFuzzer target for the KV-cache file format. Each input is the bytes of a file; it is restored
// as it is, then once more with its trailing checksum re-sealed so that mutations reach the checks
// behind the checksum (cells, high-water mark). Either restore() accepts the file, and the cache
// then runs every sequence operation on it (position arithmetic under UBSan), or it throws a Brick
// error and the cache is exactly as it was. A crash, a sanitizer report, another exception, a
// changed cache or a broken cell invariant is a finding. Built and run by scripts/fuzz.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "kv_cache_fuzz_cache.hpp"

namespace {

using namespace brick;

constexpr std::size_t kHeaderTypeOffset = 12;

// Never destroyed, so that the exit handler that removes the file can still read it.
const std::filesystem::path& input_path() {
  static const std::filesystem::path* const path = [] {
    const auto* made = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                                 ("brick_kv_cache_fuzz_" + std::to_string(getpid()) + ".bkv"));
    std::atexit([] { unlink(input_path().c_str()); });
    return made;
  }();
  return *path;
}

// The fuzz input as a file, with plain POSIX calls: an atomic, fsynced write per input would cost
// more than the restore being tested.
void write_input(const std::uint8_t* data, std::size_t size) {
  const int fd = open(input_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  for (std::size_t done = 0; done < size;) {
    const ssize_t written = write(fd, data + done, size - done);
    if (written <= 0) std::abort();
    done += static_cast<std::size_t>(written);
  }
  close(fd);
}

struct Snapshot {
  std::vector<KvCell> cells;
  std::vector<std::uint8_t> data;
  std::size_t used = 0;
  std::size_t high_water = 0;

  bool operator==(const Snapshot& other) const {
    if (cells.size() != other.cells.size()) return false;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const KvCell& a = cells[i];
      const KvCell& b = other.cells[i];
      if (a.pos != b.pos || a.shift != b.shift || a.sequences != b.sequences) return false;
    }
    return data == other.data && used == other.used && high_water == other.high_water;
  }
};

template <class T>
void append_storage(const KvCache& cache, Snapshot& s) {
  for (std::size_t layer = 0; layer < cache.shape().n_layers; ++layer) {
    for (const auto rows : {cache.keys<T>(layer), cache.values<T>(layer)}) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(rows.data());
      s.data.insert(s.data.end(), bytes, bytes + rows.size_bytes());
    }
  }
}

Snapshot snapshot(const KvCache& cache) {
  Snapshot s;
  for (CellIndex c = 0; c < cache.shape().n_cells; ++c) s.cells.push_back(cache.cell(c));
  if (cache.shape().type == KvType::F32) {
    append_storage<float>(cache, s);
  } else {
    append_storage<std::uint16_t>(cache, s);
  }
  const KvCacheStats stats = cache.stats();
  s.used = stats.used;
  s.high_water = stats.high_water;
  return s;
}

// A cache with something in it, so that "unchanged" after a rejected file is observable.
KvCache live_cache(KvType type) {
  KvCache cache(fuzz::fuzz_cache_shape(type));
  const std::vector<Pos> positions = {3, 4};
  const auto slot = cache.find_slot(5, positions, Placement::Scattered);
  if (!slot) std::abort();
  const std::size_t elements = slot->cells.size() * cache.shape().row_elements();
  if (type == KvType::F32) {
    const std::vector<float> rows(elements, 1.5f);
    cache.write(1, slot->cells, rows, rows);
  } else {
    const std::vector<std::uint16_t> rows(elements, 0x3C00);
    cache.write(1, slot->cells, rows, rows);
  }
  return cache;
}

// What every operation must leave true: the cell bookkeeping agrees with stats(), and each cell's
// position before shifting (pos - shift) is a valid position.
void check_invariants(const KvCache& cache) {
  std::size_t used = 0;
  for (CellIndex c = 0; c < cache.shape().n_cells; ++c) {
    const KvCell& cell = cache.cell(c);
    if (cell.empty()) {
      if (cell.pos != -1 || cell.shift != 0) std::abort();
      continue;
    }
    ++used;
    const std::int64_t unshifted = std::int64_t{cell.pos} - cell.shift;
    if (cell.pos < 0 || unshifted < 0 || unshifted > std::numeric_limits<Pos>::max()) std::abort();
  }
  if (used != cache.stats().used) std::abort();
}

template <class Op>
void tolerate_brick_errors(Op op) {
  try {
    op();
  } catch (const Error&) {
  }
}

// Runs the sequence operations on a restored cache, with arguments taken from the input so that the
// fuzzer can steer them, plus the extremes (shifts by +-1 and +-INT32_MAX).
void exercise(KvCache& cache, const std::uint8_t* data, std::size_t size) {
  std::uint64_t seed = XXH3_64bits(data, size);
  const auto next = [&] {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    return static_cast<std::int32_t>(seed >> 32);
  };
  constexpr Pos kMax = std::numeric_limits<Pos>::max();
  for (SeqId seq = 0; seq < kMaxSequences; ++seq) {
    bool present = false;
    for (CellIndex c = 0; c < cache.shape().n_cells; ++c) present = present || cache.cell(c).has(seq);
    if (!present) continue;
    for (const Pos delta : {1, -1, kMax, -kMax}) {
      tolerate_brick_errors([&] { cache.seq_add(seq, -1, -1, delta); });
      check_invariants(cache);
    }
    tolerate_brick_errors([&] { cache.seq_add(seq, next(), next(), next()); });
    check_invariants(cache);
    tolerate_brick_errors([&] { (void)cache.seq_pos_min(seq); });
    tolerate_brick_errors([&] { (void)cache.seq_pos_max(seq); });
    tolerate_brick_errors([&] { (void)cache.attendable_cells(seq, next() & kMax, next() & 0xFF); });
    tolerate_brick_errors([&] { cache.seq_cp(seq, (seq + 1) % kMaxSequences, next(), next()); });
    tolerate_brick_errors([&] { cache.seq_rm(seq, next(), next()); });
    check_invariants(cache);
  }
  const std::vector<Pos> positions = {next() & kMax, next() & kMax};
  tolerate_brick_errors([&] { (void)cache.find_slot(next() & 63, positions, Placement::Contiguous); });
  tolerate_brick_errors([&] { cache.seq_keep(next() & 63); });
  (void)cache.stats();
  check_invariants(cache);
}

void restore_once(const std::uint8_t* data, std::size_t size) {
  const KvType type = size > kHeaderTypeOffset && data[kHeaderTypeOffset] == 1 ? KvType::F16 : KvType::F32;
  KvCache cache = live_cache(type);
  const Snapshot before = snapshot(cache);
  write_input(data, size);
  try {
    cache.restore(input_path());
  } catch (const Error&) {
    if (!(snapshot(cache) == before)) std::abort();  // a rejected file changed the cache
    return;
  }
  check_invariants(cache);
  exercise(cache, data, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  restore_once(data, size);
  if (size >= sizeof(std::uint64_t)) {
    std::vector<std::uint8_t> sealed(data, data + size);
    const std::uint64_t checksum = XXH3_64bits(sealed.data(), size - sizeof checksum);
    std::memcpy(sealed.data() + size - sizeof checksum, &checksum, sizeof checksum);
    restore_once(sealed.data(), size);
  }
  return 0;
}
