#include "brick/runtime/kv_cache/kv_cache.hpp"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack: hashing a file needs no allocation
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include <fmt/format.h>
#include <fmt/std.h>

#include "brick/core/error.hpp"
#include "brick/core/kernel_recorder.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "brick/runtime/memory/physical_memory.hpp"
#include "brick/runtime/memory/regular_file.hpp"

namespace brick {
namespace {

// File layout (native little-endian): FileHeader, n_cells FileCell records, for each layer its K
// then its V storage, then the XXH3-64 of every preceding byte.
constexpr char kMagic[8] = {'B', 'R', 'I', 'C', 'K', 'K', 'V', '\n'};
constexpr std::uint32_t kFormatVersion = 1;

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t type;
  std::uint64_t n_layers;
  std::uint64_t n_cells;
  std::uint64_t n_kv_heads;
  std::uint64_t head_dim;
  std::uint64_t high_water;
};
static_assert(sizeof(FileHeader) == 56 && std::is_trivially_copyable_v<FileHeader>);

struct FileCell {
  std::int32_t pos;
  std::int32_t shift;
  std::uint64_t sequences;
};
static_assert(sizeof(FileCell) == 16 && std::is_trivially_copyable_v<FileCell>);

constexpr Pos kNoUpperBound = std::numeric_limits<Pos>::max();
constexpr std::int64_t kMaxPos = std::numeric_limits<Pos>::max();

std::string_view name(KvType type) { return type == KvType::F32 ? "f32" : "f16"; }

std::string describe_type(std::uint32_t type) {
  if (type == static_cast<std::uint32_t>(KvType::F32)) return "f32";
  if (type == static_cast<std::uint32_t>(KvType::F16)) return "f16";
  return fmt::format("unknown type {}", type);
}

std::size_t checked_product(std::initializer_list<std::size_t> factors) {
  std::size_t product = 1;
  for (std::size_t f : factors) {
    if (__builtin_mul_overflow(product, f, &product)) {
      throw InvalidArgument("KvCache: the cache size overflows the address space");
    }
  }
  return product;
}

void check_seq(SeqId seq, std::string_view operation) {
  if (seq < 0 || seq >= kMaxSequences) {
    throw InvalidArgument(fmt::format("KvCache::{}: sequence id {} is outside 0..{}", operation, seq,
                                      kMaxSequences - 1));
  }
}

std::uint64_t bit(SeqId seq) { return std::uint64_t{1} << seq; }

// llama.cpp's convention: a negative lower bound is 0, a negative upper bound is unbounded.
std::pair<Pos, Pos> normalise(Pos p0, Pos p1) { return {p0 < 0 ? 0 : p0, p1 < 0 ? kNoUpperBound : p1}; }

bool in_range(Pos pos, std::pair<Pos, Pos> range) { return pos >= range.first && pos < range.second; }

// XXH3-64 over the file's bytes, fed in the order they are written.
class Checksum {
 public:
  Checksum() noexcept {
    XXH3_INITSTATE(&state_);
    XXH3_64bits_reset(&state_);
  }
  void add(std::span<const std::byte> bytes) noexcept { XXH3_64bits_update(&state_, bytes.data(), bytes.size()); }
  std::uint64_t digest() const noexcept { return XXH3_64bits_digest(&state_); }

 private:
  XXH3_state_t state_;
};

template <class T>
std::span<const std::byte> bytes_of(const T& value) noexcept {
  return std::as_bytes(std::span(&value, 1));
}
template <class T>
std::span<std::byte> writable_bytes_of(T& value) noexcept {
  return std::as_writable_bytes(std::span(&value, 1));
}

AlignedBuffer allocate_storage(std::size_t bytes) {
  return bytes >= kHugePageBytes ? AlignedBuffer::huge_page_aligned(bytes) : AlignedBuffer::page_aligned(bytes);
}

}  // namespace

KvCache::KvCache(const KvCacheShape& shape) : shape_(shape) {
  if (shape.n_layers == 0 || shape.n_cells == 0 || shape.n_kv_heads == 0 || shape.head_dim == 0) {
    throw InvalidArgument(fmt::format("KvCache: every dimension must be positive, got layers={} cells={} "
                                      "kv_heads={} head_dim={}",
                                      shape.n_layers, shape.n_cells, shape.n_kv_heads, shape.head_dim));
  }
  if (shape.type != KvType::F32 && shape.type != KvType::F16) {
    throw InvalidArgument(fmt::format("KvCache: unknown storage type {}", static_cast<std::uint32_t>(shape.type)));
  }
  if (shape.n_cells > std::numeric_limits<CellIndex>::max()) {
    throw InvalidArgument(fmt::format("KvCache: {} cells exceeds the limit of {}", shape.n_cells,
                                      std::numeric_limits<CellIndex>::max()));
  }
  layer_stride_ = checked_product({shape.n_cells, shape.n_kv_heads, shape.head_dim, shape.element_bytes()});
  const std::size_t total = checked_product({layer_stride_, 2, shape.n_layers});
  const std::size_t cell_bytes = checked_product({shape.n_cells, sizeof(KvCell)});
  if (total > std::numeric_limits<std::size_t>::max() - cell_bytes) {
    throw InvalidArgument("KvCache: the cache size overflows the address space");
  }
  require_fits_in_memory(total + cell_bytes, "KvCache");
  storage_ = allocate_storage(total);
  // Every page touched now, as llama.cpp clears its KV buffer at start-up: otherwise the first
  // writes into each (huge) page fault and zero it in the middle of a decode step.
  std::memset(storage_.data(), 0, total);
  cells_ = allocate_vector<KvCell>(shape.n_cells, "KvCache");
}

const KvCell& KvCache::cell(CellIndex index) const { return cells_[checked_cell(index)]; }

std::size_t KvCache::checked_cell(CellIndex cell) const {
  if (cell >= cells_.size()) {
    throw InvalidArgument(fmt::format("KvCache: cell {} is outside 0..{}", cell, cells_.size() - 1));
  }
  return cell;
}

void KvCache::check_type(KvType expected) const {
  if (expected != shape_.type) {
    throw InvalidArgument(fmt::format("KvCache: this cache stores {} rows, accessed as {}", name(shape_.type),
                                      name(expected)));
  }
}

std::span<const std::byte> KvCache::layer_bytes(std::size_t layer, std::size_t which) const {
  if (layer >= shape_.n_layers) {
    throw InvalidArgument(fmt::format("KvCache: layer {} is outside 0..{}", layer, shape_.n_layers - 1));
  }
  return storage_.bytes().subspan((2 * layer + which) * layer_stride_, layer_stride_);
}

std::byte* KvCache::mutable_layer_bytes(std::size_t layer, std::size_t which) {
  return storage_.data() + (2 * layer + which) * layer_stride_;
}

std::optional<KvSlot> KvCache::find_slot(SeqId seq, std::span<const Pos> positions, Placement placement) {
  check_seq(seq, "find_slot");
  if (placement != Placement::Contiguous && placement != Placement::Scattered) {
    throw InvalidArgument(fmt::format("KvCache::find_slot: {} is not a Placement", static_cast<int>(placement)));
  }
  if (positions.empty()) throw InvalidArgument("KvCache::find_slot: no tokens requested");
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] < 0) {
      throw InvalidArgument(fmt::format("KvCache::find_slot: token {} has negative position {}", i, positions[i]));
    }
  }
  const std::size_t n = positions.size();
  if (n > cells_.size() - used_) return std::nullopt;

  KvSlot slot;
  slot.cells.reserve(n);
  if (placement == Placement::Contiguous) {
    std::size_t run = 0, end = 0;
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      run = cells_[i].empty() ? run + 1 : 0;
      if (run == n) {
        end = i + 1;
        break;
      }
    }
    if (run < n) return std::nullopt;
    for (std::size_t c = end - n; c < end; ++c) slot.cells.push_back(static_cast<CellIndex>(c));
  } else {
    for (std::size_t i = 0; i < cells_.size() && slot.cells.size() < n; ++i) {
      if (cells_[i].empty()) slot.cells.push_back(static_cast<CellIndex>(i));
    }
  }
  for (std::size_t k = 0; k < n; ++k) cells_[slot.cells[k]] = KvCell{positions[k], bit(seq), 0};
  used_ += n;
  high_water_ = std::max(high_water_, used_);
  return slot;
}

void KvCache::write_rows(std::size_t layer, std::span<const CellIndex> cells, const std::byte* k,
                         const std::byte* v, std::size_t k_elements, std::size_t v_elements) {
  if (layer >= shape_.n_layers) {
    throw InvalidArgument(fmt::format("KvCache::write: layer {} is outside 0..{}", layer, shape_.n_layers - 1));
  }
  std::size_t expected = 0;
  if (__builtin_mul_overflow(cells.size(), shape_.row_elements(), &expected) || k_elements != expected ||
      v_elements != expected) {
    throw InvalidArgument(fmt::format("KvCache::write: {} cells need {} K and V values each, got {} and {}",
                                      cells.size(), expected, k_elements, v_elements));
  }
  for (CellIndex c : cells) {
    if (cells_[checked_cell(c)].empty()) {
      throw StateError(fmt::format("KvCache::write: cell {} belongs to no sequence; claim it with find_slot", c));
    }
  }
  const std::size_t row = shape_.row_bytes();
  std::byte* const keys = mutable_layer_bytes(layer, 0);
  std::byte* const values = mutable_layer_bytes(layer, 1);
  KernelRecorder* const recorder = active_kernel_recorder();
  const std::uint64_t start_ns = recorder != nullptr ? kernel_clock_ns() : 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::memcpy(keys + cells[i] * row, k + i * row, row);
    std::memcpy(values + cells[i] * row, v + i * row, row);
  }
  if (recorder != nullptr) [[unlikely]] {
    recorder->transfer({"k,v rows", "kv_cache", TransferDirection::HostCopy, 2 * cells.size() * row, start_ns,
                        kernel_clock_ns()});
  }
}

void KvCache::write(std::size_t layer, std::span<const CellIndex> cells, std::span<const float> k,
                    std::span<const float> v) {
  check_type(KvType::F32);
  write_rows(layer, cells, reinterpret_cast<const std::byte*>(k.data()), reinterpret_cast<const std::byte*>(v.data()),
             k.size(), v.size());
}

void KvCache::write(std::size_t layer, std::span<const CellIndex> cells, std::span<const std::uint16_t> k,
                    std::span<const std::uint16_t> v) {
  check_type(KvType::F16);
  write_rows(layer, cells, reinterpret_cast<const std::byte*>(k.data()), reinterpret_cast<const std::byte*>(v.data()),
             k.size(), v.size());
}

void KvCache::free_cell(KvCell& cell) noexcept {
  cell = KvCell{};
  --used_;
}

std::size_t KvCache::seq_rm(SeqId seq, Pos p0, Pos p1) {
  if (seq >= 0) check_seq(seq, "seq_rm");
  const auto range = normalise(p0, p1);
  std::size_t changed = 0;
  for (KvCell& c : cells_) {
    if (c.empty() || !in_range(c.pos, range)) continue;
    if (seq < 0) {
      free_cell(c);
      ++changed;
    } else if (c.has(seq)) {
      c.sequences &= ~bit(seq);
      if (c.empty()) free_cell(c);
      ++changed;
    }
  }
  return changed;
}

std::size_t KvCache::seq_cp(SeqId src, SeqId dst, Pos p0, Pos p1) {
  check_seq(src, "seq_cp");
  check_seq(dst, "seq_cp");
  if (src == dst) return 0;
  const auto range = normalise(p0, p1);
  std::size_t changed = 0;
  for (KvCell& c : cells_) {
    if (c.has(src) && !c.has(dst) && in_range(c.pos, range)) {
      c.sequences |= bit(dst);
      ++changed;
    }
  }
  return changed;
}

std::size_t KvCache::seq_keep(SeqId seq) {
  check_seq(seq, "seq_keep");
  std::size_t changed = 0;
  for (KvCell& c : cells_) {
    if (c.empty() || c.sequences == bit(seq)) continue;
    if (c.has(seq)) {
      c.sequences = bit(seq);
    } else {
      free_cell(c);
    }
    ++changed;
  }
  return changed;
}

std::size_t KvCache::seq_add(SeqId seq, Pos p0, Pos p1, Pos delta) {
  check_seq(seq, "seq_add");
  if (delta == 0) return 0;
  const auto range = normalise(p0, p1);
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    const KvCell& c = cells_[i];
    if (!c.has(seq) || !in_range(c.pos, range)) continue;
    if (c.sequences != bit(seq)) {
      throw StateError(fmt::format("KvCache::seq_add: cell {} (position {}) is shared with other sequences "
                                   "(set {:#x}); shifting it for sequence {} would move it for them too",
                                   i, c.pos, c.sequences, seq));
    }
    // A cell that would move below 0 is removed instead. The shift cannot overflow: it is always the
    // position minus the position K was last rotated for (when the cell was claimed or at
    // clear_pending_shifts(); restore() checks files for it), and both lie in 0..INT32_MAX.
    if (std::int64_t{c.pos} + delta > kMaxPos) {
      throw InvalidArgument(fmt::format("KvCache::seq_add: cell {} at position {} moved by {} overflows", i, c.pos,
                                        delta));
    }
  }
  std::size_t changed = 0;
  for (KvCell& c : cells_) {
    if (!c.has(seq) || !in_range(c.pos, range)) continue;
    ++changed;
    if (std::int64_t{c.pos} + delta < 0) {
      free_cell(c);
      continue;
    }
    c.pos += delta;
    c.shift += delta;
  }
  return changed;
}

std::optional<Pos> KvCache::seq_pos_min(SeqId seq) const {
  check_seq(seq, "seq_pos_min");
  std::optional<Pos> result;
  for (const KvCell& c : cells_) {
    if (c.has(seq) && (!result || c.pos < *result)) result = c.pos;
  }
  return result;
}

std::optional<Pos> KvCache::seq_pos_max(SeqId seq) const {
  check_seq(seq, "seq_pos_max");
  std::optional<Pos> result;
  for (const KvCell& c : cells_) {
    if (c.has(seq) && (!result || c.pos > *result)) result = c.pos;
  }
  return result;
}

void KvCache::clear() {
  std::fill(cells_.begin(), cells_.end(), KvCell{});
  used_ = 0;
  high_water_ = 0;
}

bool KvCache::has_pending_shift() const noexcept {
  return std::any_of(cells_.begin(), cells_.end(), [](const KvCell& c) { return c.shift != 0; });
}

void KvCache::clear_pending_shifts() noexcept {
  for (KvCell& c : cells_) c.shift = 0;
}

void KvCache::attendable_cells(SeqId seq, Pos pos, Pos window, std::vector<CellIndex>& out) const {
  check_seq(seq, "attendable_cells");
  if (pos < 0) throw InvalidArgument(fmt::format("KvCache::attendable_cells: negative query position {}", pos));
  if (window < 0) throw InvalidArgument(fmt::format("KvCache::attendable_cells: negative window {}", window));
  out.clear();
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    const KvCell& c = cells_[i];
    if (c.has(seq) && c.pos <= pos && (window == 0 || pos - c.pos < window)) {
      out.push_back(static_cast<CellIndex>(i));
    }
  }
}

std::vector<CellIndex> KvCache::attendable_cells(SeqId seq, Pos pos, Pos window) const {
  std::vector<CellIndex> out;
  attendable_cells(seq, pos, window, out);
  return out;
}

KvCacheStats KvCache::stats() const {
  KvCacheStats s;
  s.cells = cells_.size();
  s.used = used_;
  s.free = cells_.size() - used_;
  s.high_water = high_water_;
  std::size_t run = 0;
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    if (cells_[i].empty()) {
      if (run++ == 0) ++s.free_runs;
      s.largest_free_run = std::max(s.largest_free_run, run);
    } else {
      run = 0;
      s.used_extent = i + 1;
    }
  }
  s.fragmentation = s.free == 0 ? 0.0 : 1.0 - static_cast<double>(s.largest_free_run) / static_cast<double>(s.free);
  return s;
}

void KvCache::save(const std::filesystem::path& path) const {
  AtomicFile file(path);
  Checksum checksum;
  const auto put = [&](std::span<const std::byte> bytes) {
    file.write(bytes);
    checksum.add(bytes);
  };
  FileHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.version = kFormatVersion;
  header.type = static_cast<std::uint32_t>(shape_.type);
  header.n_layers = shape_.n_layers;
  header.n_cells = shape_.n_cells;
  header.n_kv_heads = shape_.n_kv_heads;
  header.head_dim = shape_.head_dim;
  header.high_water = high_water_;
  put(bytes_of(header));
  std::vector<FileCell> records = allocate_vector<FileCell>(cells_.size(), "KvCache::save");
  for (std::size_t i = 0; i < cells_.size(); ++i) records[i] = {cells_[i].pos, cells_[i].shift, cells_[i].sequences};
  put(std::as_bytes(std::span(records)));
  put(storage_.bytes());
  const std::uint64_t digest = checksum.digest();
  file.write(bytes_of(digest));
  file.commit();
}

void KvCache::restore(const std::filesystem::path& path) {
  const RegularFile file(path);
  const auto format_error = [&](const std::string& what) {
    return FormatError(fmt::format("KvCache::restore: {}: {}", path, what));
  };
  if (file.size() < sizeof(FileHeader)) {
    throw format_error(fmt::format("{} bytes is shorter than the {}-byte header", file.size(), sizeof(FileHeader)));
  }
  FileHeader header;
  file.read_at(0, writable_bytes_of(header));
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) throw format_error("not a Brick KV cache file (bad magic)");
  if (header.version != kFormatVersion) {
    throw format_error(fmt::format("format version {} is not the supported {}", header.version, kFormatVersion));
  }
  const bool same_shape = header.type == static_cast<std::uint32_t>(shape_.type) &&
                          header.n_layers == shape_.n_layers && header.n_cells == shape_.n_cells &&
                          header.n_kv_heads == shape_.n_kv_heads && header.head_dim == shape_.head_dim;
  if (!same_shape) {
    throw format_error(fmt::format("the file holds a cache of {} layers={} cells={} kv_heads={} head_dim={}, "
                                   "this cache is {} layers={} cells={} kv_heads={} head_dim={}",
                                   describe_type(header.type), header.n_layers, header.n_cells, header.n_kv_heads,
                                   header.head_dim, name(shape_.type), shape_.n_layers, shape_.n_cells,
                                   shape_.n_kv_heads, shape_.head_dim));
  }
  // Every offset follows from this cache's own shape, which the constructor checked for overflow.
  const std::size_t cells_offset = sizeof(FileHeader);
  const std::size_t data_offset = cells_offset + cells_.size() * sizeof(FileCell);
  const std::size_t checksum_offset = data_offset + storage_.size();
  const std::size_t expected_size = checksum_offset + sizeof(std::uint64_t);
  if (file.size() != expected_size) {
    throw format_error(fmt::format("{} bytes, expected {} ({})", file.size(), expected_size,
                                   file.size() < expected_size ? "truncated" : "trailing bytes"));
  }

  // Everything is read into new memory and checked before any of it replaces this cache's state.
  std::vector<FileCell> records = allocate_vector<FileCell>(cells_.size(), "KvCache::restore");
  file.read_at(cells_offset, std::as_writable_bytes(std::span(records)));
  AlignedBuffer storage = allocate_storage(storage_.size());
  file.read_at(data_offset, storage.bytes());
  std::uint64_t stored_checksum = 0;
  file.read_at(checksum_offset, writable_bytes_of(stored_checksum));
  Checksum checksum;
  checksum.add(bytes_of(header));
  checksum.add(std::as_bytes(std::span(records)));
  checksum.add(storage.bytes());
  if (checksum.digest() != stored_checksum) {
    throw format_error(fmt::format("checksum {:#018x} does not match the stored {:#018x} (corrupted)",
                                   checksum.digest(), stored_checksum));
  }

  std::vector<KvCell> cells = allocate_vector<KvCell>(cells_.size(), "KvCache::restore");
  std::size_t used = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const FileCell& record = records[i];
    const bool empty = record.sequences == 0;
    if (empty ? (record.pos != -1 || record.shift != 0) : record.pos < 0) {
      throw format_error(fmt::format("cell {} is inconsistent: position {}, shift {}, sequences {:#x}", i, record.pos,
                                     record.shift, record.sequences));
    }
    // seq_add keeps position - shift (the position before shifting) a valid position.
    const std::int64_t unshifted = std::int64_t{record.pos} - record.shift;
    if (!empty && (unshifted < 0 || unshifted > kMaxPos)) {
      throw format_error(fmt::format("cell {} is inconsistent: position {} with shift {} was position {} before "
                                     "shifting, outside 0..{}",
                                     i, record.pos, record.shift, unshifted, kMaxPos));
    }
    cells[i] = KvCell{record.pos, record.sequences, record.shift};
    used += empty ? 0 : 1;
  }
  if (header.high_water < used || header.high_water > cells.size()) {
    throw format_error(fmt::format("high-water mark {} is outside {}..{}", header.high_water, used, cells.size()));
  }

  storage_ = std::move(storage);
  cells_ = std::move(cells);
  used_ = used;
  high_water_ = header.high_water;
}

}  // namespace brick
