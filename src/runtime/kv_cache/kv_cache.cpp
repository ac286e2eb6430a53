#include "brick/runtime/kv_cache/kv_cache.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/std.h>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/mapped_file.hpp"
#include "runtime/os_error.hpp"

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

std::string_view name(KvType type) { return type == KvType::F32 ? "f32" : "f16"; }

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

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
struct Xxh3StateFree {
  void operator()(XXH3_state_t* state) const { XXH3_freeState(state); }
};

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
  storage_ = total >= kHugePageBytes ? AlignedBuffer::huge_page_aligned(total) : AlignedBuffer::page_aligned(total);
  cells_.assign(shape.n_cells, KvCell{});
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
  const std::size_t expected = cells.size() * shape_.row_elements();
  if (k_elements != expected || v_elements != expected) {
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
  for (std::size_t i = 0; i < cells.size(); ++i) {
    std::memcpy(keys + cells[i] * row, k + i * row, row);
    std::memcpy(values + cells[i] * row, v + i * row, row);
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
    if (std::int64_t{c.pos} + delta > std::numeric_limits<Pos>::max()) {
      throw InvalidArgument(fmt::format("KvCache::seq_add: position {} + {} overflows", c.pos, delta));
    }
  }
  std::size_t changed = 0;
  for (KvCell& c : cells_) {
    if (!c.has(seq) || !in_range(c.pos, range)) continue;
    ++changed;
    if (c.pos + delta < 0) {
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
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  auto io_error = [&](std::string_view what) {
    const int error = errno;
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return IoError(fmt::format("KvCache::save: {} {}: {}", what, temporary, detail::errno_text(error)));
  };
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(temporary.c_str(), "wb"));
  if (!file) throw io_error("cannot create");
  std::unique_ptr<XXH3_state_t, Xxh3StateFree> hash(XXH3_createState());
  if (!hash || XXH3_64bits_reset(hash.get()) != XXH_OK) throw IoError("KvCache::save: cannot create a hash state");
  auto put = [&](const void* data, std::size_t bytes) {
    if (std::fwrite(data, 1, bytes, file.get()) != bytes) throw io_error("cannot write");
    XXH3_64bits_update(hash.get(), data, bytes);
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
  put(&header, sizeof header);
  std::vector<FileCell> records(cells_.size());
  for (std::size_t i = 0; i < cells_.size(); ++i) records[i] = {cells_[i].pos, cells_[i].shift, cells_[i].sequences};
  put(records.data(), records.size() * sizeof(FileCell));
  put(storage_.data(), storage_.size());
  const std::uint64_t checksum = XXH3_64bits_digest(hash.get());
  if (std::fwrite(&checksum, 1, sizeof checksum, file.get()) != sizeof checksum) throw io_error("cannot write");
  if (std::fflush(file.get()) != 0) throw io_error("cannot flush");
  if (std::fclose(file.release()) != 0) throw io_error("cannot close");
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw io_error(fmt::format("cannot rename to {}", path));
}

void KvCache::restore(const std::filesystem::path& path) {
  const MappedFile file(path, Advice::Sequential);
  const std::span<const std::byte> bytes = file.bytes();
  auto format_error = [&](const std::string& what) {
    return FormatError(fmt::format("KvCache::restore: {}: {}", path, what));
  };
  if (bytes.size() < sizeof(FileHeader)) {
    throw format_error(fmt::format("{} bytes is shorter than the {}-byte header", bytes.size(), sizeof(FileHeader)));
  }
  FileHeader header;
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) throw format_error("not a Brick KV cache file (bad magic)");
  if (header.version != kFormatVersion) {
    throw format_error(fmt::format("format version {} is not the supported {}", header.version, kFormatVersion));
  }
  const bool same_shape = header.type == static_cast<std::uint32_t>(shape_.type) &&
                          header.n_layers == shape_.n_layers && header.n_cells == shape_.n_cells &&
                          header.n_kv_heads == shape_.n_kv_heads && header.head_dim == shape_.head_dim;
  if (!same_shape) {
    throw format_error(fmt::format("the file holds a cache of type {} layers={} cells={} kv_heads={} head_dim={}, "
                                   "this cache is {} layers={} cells={} kv_heads={} head_dim={}",
                                   header.type, header.n_layers, header.n_cells, header.n_kv_heads, header.head_dim,
                                   name(shape_.type), shape_.n_layers, shape_.n_cells, shape_.n_kv_heads,
                                   shape_.head_dim));
  }
  const std::size_t cells_offset = sizeof(FileHeader);
  const std::size_t data_offset = cells_offset + cells_.size() * sizeof(FileCell);
  const std::size_t checksum_offset = data_offset + storage_.size();
  const std::size_t expected_size = checksum_offset + sizeof(std::uint64_t);
  if (bytes.size() != expected_size) {
    throw format_error(fmt::format("{} bytes, expected {} ({})", bytes.size(), expected_size,
                                   bytes.size() < expected_size ? "truncated" : "trailing bytes"));
  }
  std::uint64_t stored_checksum;
  std::memcpy(&stored_checksum, bytes.data() + checksum_offset, sizeof stored_checksum);
  const std::uint64_t checksum = XXH3_64bits(bytes.data(), checksum_offset);
  if (checksum != stored_checksum) {
    throw format_error(fmt::format("checksum {:#018x} does not match the stored {:#018x} (corrupted)", checksum,
                                   stored_checksum));
  }

  std::vector<KvCell> cells(cells_.size());
  std::size_t used = 0;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    FileCell record;
    std::memcpy(&record, bytes.data() + cells_offset + i * sizeof record, sizeof record);
    const bool empty = record.sequences == 0;
    if (empty ? (record.pos != -1 || record.shift != 0) : record.pos < 0) {
      throw format_error(fmt::format("cell {} is inconsistent: position {}, shift {}, sequences {:#x}", i, record.pos,
                                     record.shift, record.sequences));
    }
    cells[i] = KvCell{record.pos, record.sequences, record.shift};
    used += empty ? 0 : 1;
  }
  if (header.high_water < used || header.high_water > cells.size()) {
    throw format_error(fmt::format("high-water mark {} is outside {}..{}", header.high_water, used, cells.size()));
  }

  std::memcpy(storage_.data(), bytes.data() + data_offset, storage_.size());
  cells_ = std::move(cells);
  used_ = used;
  high_water_ = header.high_water;
}

}  // namespace brick
