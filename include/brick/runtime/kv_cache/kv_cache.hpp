#pragma once
// KvCache: the keys and values of every attention layer for a fixed number of cells, allocated once,
// with llama.cpp-style cell bookkeeping (llama_kv_cache). A cell holds one token's K and V rows
// (n_kv_heads * head_dim elements each, per layer), the token's position, and the set of sequences
// that contain the token, so a prompt prefix shared by several sequences is stored once (seq_cp).
//
// Storage is f32 or f16. f16 rows are raw IEEE binary16 bits (std::uint16_t): converting belongs to
// the ops above the runtime layer, which write already-converted rows and read them with their own
// (F16C or reference) conversion. The element type of every read and write must match the cache's.
//
// Sequence ids are 0..63 (a 64-bit set per cell). Positions are >= 0; an empty cell has no
// sequences and position -1. Ranges [p0, p1) follow llama.cpp: a negative p0 means 0 and a negative
// p1 means "no upper bound".
//
// Not thread-safe: one owner mutates it; concurrent const reads are fine while nobody mutates.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "brick/runtime/memory/aligned_buffer.hpp"

namespace brick {

enum class KvType : std::uint32_t { F32 = 0, F16 = 1 };

struct KvCacheShape {
  std::size_t n_layers = 0;
  std::size_t n_cells = 0;
  std::size_t n_kv_heads = 0;
  std::size_t head_dim = 0;
  KvType type = KvType::F32;

  std::size_t row_elements() const noexcept { return n_kv_heads * head_dim; }
  std::size_t element_bytes() const noexcept { return type == KvType::F32 ? 4 : 2; }
  std::size_t row_bytes() const noexcept { return row_elements() * element_bytes(); }
  friend bool operator==(const KvCacheShape&, const KvCacheShape&) = default;
};

using SeqId = std::int32_t;
using Pos = std::int32_t;
using CellIndex = std::uint32_t;

inline constexpr SeqId kMaxSequences = 64;

struct KvCell {
  Pos pos = -1;
  std::uint64_t sequences = 0;  // bit s set: sequence s contains this token
  Pos shift = 0;                // seq_add deltas not yet applied to K (RoPE); see pending_shift.
                                // pos - shift, the position K was rotated for, is >= 0.

  bool empty() const noexcept { return sequences == 0; }
  bool has(SeqId seq) const noexcept { return ((sequences >> seq) & 1u) != 0; }
};

enum class Placement {
  Contiguous,  // one run of adjacent cells (first fit from cell 0)
  Scattered,   // the lowest-numbered free cells, wherever they are
};

struct KvSlot {
  std::vector<CellIndex> cells;  // cells[i] holds the token at positions[i]
};

// Occupancy. fragmentation = 1 - largest_free_run / free (0 when nothing is free): 0 means every
// free cell is in one run, values near 1 mean the free space is in many small holes, so a contiguous
// request can fail while many cells are free.
struct KvCacheStats {
  std::size_t cells = 0;
  std::size_t used = 0;
  std::size_t free = 0;
  std::size_t high_water = 0;   // most cells used at once since construction or clear()
  std::size_t used_extent = 0;  // 1 + the highest used cell index (0 when empty): attention scans this far
  std::size_t free_runs = 0;
  std::size_t largest_free_run = 0;
  double fragmentation = 0.0;
};

class KvCache {
 public:
  // Allocates every cell's storage now (zero-filled). Throws InvalidArgument for a zero dimension, an
  // unknown type, more cells than a CellIndex holds or a size that overflows memory addressing, and
  // CapacityError (naming the size) for a cache larger than the machine's memory or an allocation
  // that fails.
  explicit KvCache(const KvCacheShape& shape);

  const KvCacheShape& shape() const noexcept { return shape_; }
  const KvCell& cell(CellIndex index) const;  // InvalidArgument when out of range

  // Claims free cells for tokens of `seq` at `positions` and records their metadata. Returns nullopt,
  // changing nothing, when there is no room. Throws InvalidArgument for an empty request, a bad
  // sequence id, a negative position or a value that is not a Placement.
  std::optional<KvSlot> find_slot(SeqId seq, std::span<const Pos> positions, Placement placement);

  // Writes the K and V rows of `cells` in `layer`: k and v hold cells.size() rows of row_elements()
  // values each. Throws InvalidArgument for a bad layer, cell index, size or element type, and
  // StateError for a cell no sequence holds.
  void write(std::size_t layer, std::span<const CellIndex> cells, std::span<const float> k,
             std::span<const float> v);
  void write(std::size_t layer, std::span<const CellIndex> cells, std::span<const std::uint16_t> k,
             std::span<const std::uint16_t> v);

  // Read views. T is float for an f32 cache, std::uint16_t (binary16 bits) for an f16 cache.
  template <class T>
  std::span<const T> keys(std::size_t layer) const {
    return typed<T>(layer_bytes(layer, 0));
  }
  template <class T>
  std::span<const T> values(std::size_t layer) const {
    return typed<T>(layer_bytes(layer, 1));
  }
  template <class T>
  std::span<const T> key_row(std::size_t layer, CellIndex cell) const {
    return keys<T>(layer).subspan(checked_cell(cell) * shape_.row_elements(), shape_.row_elements());
  }
  template <class T>
  std::span<const T> value_row(std::size_t layer, CellIndex cell) const {
    return values<T>(layer).subspan(checked_cell(cell) * shape_.row_elements(), shape_.row_elements());
  }

  // Sequence operations with llama.cpp semantics. seq_rm with seq < 0 removes every sequence in the
  // range. Each returns the number of cells it changed. Other negative or >= 64 ids throw
  // InvalidArgument.
  std::size_t seq_rm(SeqId seq, Pos p0, Pos p1);
  std::size_t seq_cp(SeqId src, SeqId dst, Pos p0, Pos p1);
  std::size_t seq_keep(SeqId seq);
  // Shifts the positions of seq's cells in [p0, p1) by delta (context shifting); a cell whose
  // position would go below 0 is removed. The shift is also recorded per cell for the RoPE
  // re-rotation of K. A cell shared with another sequence cannot move for one of them: StateError,
  // and nothing changes; so does a position that would pass the largest Pos (InvalidArgument).
  std::size_t seq_add(SeqId seq, Pos p0, Pos p1, Pos delta);
  std::optional<Pos> seq_pos_min(SeqId seq) const;
  std::optional<Pos> seq_pos_max(SeqId seq) const;
  void clear();

  // Whether some cell carries a shift that K has not been re-rotated for, and forgetting them once
  // the caller has applied them.
  bool has_pending_shift() const noexcept;
  void clear_pending_shifts() noexcept;

  // The cells a query token of `seq` at position `pos` may attend to: cells of seq with
  // position <= pos and, when window > 0, pos - position < window (a sliding window of `window`
  // tokens including the query's own). In cell order. The `out` form reuses its capacity.
  std::vector<CellIndex> attendable_cells(SeqId seq, Pos pos, Pos window = 0) const;
  void attendable_cells(SeqId seq, Pos pos, Pos window, std::vector<CellIndex>& out) const;

  KvCacheStats stats() const;

  // Writes the whole cache (shape, cells, K and V, an XXH3-64 checksum) to `path` through an
  // AtomicFile (runtime/atomic_file.hpp): a new temporary beside it, never a link, renamed over it
  // once complete and flushed. Throws IoError naming the path and the OS reason; an existing file
  // at `path` is then left as it was.
  void save(const std::filesystem::path& path) const;
  // Replaces the whole cache with the file's contents. The file must have been saved from a cache of
  // the same shape. It is read through RegularFile (runtime/memory/regular_file.hpp) into new memory
  // (a second copy of the storage while it runs) and checked whole before anything here changes:
  // IoError when it cannot be read, is not a regular file (a FIFO is refused without blocking) or
  // shrinks while being read; FormatError for a bad magic, version, shape, size, checksum or cell
  // record (a cell's position and shift must describe a valid position before shifting);
  // CapacityError when the memory is not there. On any error this cache is left unchanged.
  void restore(const std::filesystem::path& path);

 private:
  std::span<const std::byte> layer_bytes(std::size_t layer, std::size_t which) const;
  std::byte* mutable_layer_bytes(std::size_t layer, std::size_t which);
  std::size_t checked_cell(CellIndex cell) const;
  void check_type(KvType expected) const;
  void write_rows(std::size_t layer, std::span<const CellIndex> cells, const std::byte* k,
                  const std::byte* v, std::size_t k_elements, std::size_t v_elements);
  void free_cell(KvCell& cell) noexcept;

  template <class T>
  std::span<const T> typed(std::span<const std::byte> bytes) const {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, std::uint16_t>,
                  "KV rows are float (f32 cache) or std::uint16_t (f16 cache)");
    check_type(std::is_same_v<T, float> ? KvType::F32 : KvType::F16);
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }

  KvCacheShape shape_;
  std::size_t layer_stride_ = 0;  // bytes of one layer's K (and of its V)
  AlignedBuffer storage_;         // [layer][K, V][cell][row]
  std::vector<KvCell> cells_;
  std::size_t used_ = 0;
  std::size_t high_water_ = 0;
};

}  // namespace brick
