// Writes the seed corpus of the KV-cache fuzz target: files saved by KvCache itself from caches in
// the states the format has to carry (empty, full, shared prefixes, pending shifts, f16 rows).
//   brick_kv_cache_fuzz_seeds DIR
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "kv_cache_fuzz_cache.hpp"
#include "seed_folder.hpp"

namespace {

using namespace brick;

std::vector<Pos> positions_from(Pos first, std::size_t n) {
  std::vector<Pos> positions(n);
  std::iota(positions.begin(), positions.end(), first);
  return positions;
}

void fill_rows(KvCache& cache, const KvSlot& slot) {
  const std::size_t elements = slot.cells.size() * cache.shape().row_elements();
  for (std::size_t layer = 0; layer < cache.shape().n_layers; ++layer) {
    if (cache.shape().type == KvType::F32) {
      std::vector<float> rows(elements);
      std::iota(rows.begin(), rows.end(), static_cast<float>(layer));
      cache.write(layer, slot.cells, rows, rows);
    } else {
      std::vector<std::uint16_t> rows(elements);
      std::iota(rows.begin(), rows.end(), static_cast<std::uint16_t>(0x3C00 + layer));
      cache.write(layer, slot.cells, rows, rows);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::filesystem::path> given = brick::fuzz::seed_folder(argc, argv);
  if (!given) return 2;
  const std::filesystem::path& dir = *given;
  try {
    const KvCacheShape f32 = fuzz::fuzz_cache_shape(KvType::F32);

    KvCache empty(f32);
    empty.save(dir / "empty.bkv");

    KvCache full(f32);
    fill_rows(full, *full.find_slot(0, positions_from(0, f32.n_cells), Placement::Contiguous));
    full.save(dir / "full.bkv");

    // A prompt shared by three sequences, a context shift with a pending RoPE shift, freed cells.
    KvCache shared(f32);
    fill_rows(shared, *shared.find_slot(0, positions_from(0, 6), Placement::Contiguous));
    shared.seq_cp(0, 1, 0, 4);
    shared.seq_cp(0, 63, 0, 2);
    shared.seq_rm(0, 4, 5);
    shared.seq_add(0, 5, -1, -1);
    shared.save(dir / "shared_shifted.bkv");

    // Positions near the top of the range, scattered into the holes left by a removal.
    KvCache high(f32);
    high.find_slot(2, positions_from(0, 4), Placement::Contiguous);
    high.seq_rm(2, 1, 3);
    fill_rows(high, *high.find_slot(7, positions_from(2147483640, 3), Placement::Scattered));
    high.save(dir / "high_positions.bkv");

    KvCache half(fuzz::fuzz_cache_shape(KvType::F16));
    fill_rows(half, *half.find_slot(4, positions_from(10, 3), Placement::Contiguous));
    half.save(dir / "f16.bkv");
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
