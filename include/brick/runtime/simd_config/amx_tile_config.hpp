#pragma once
// The 64-byte operand of LDTILECFG, as plain data, and its validity rules for palette 1 (8 tiles of
// at most 16 rows x 64 bytes). An invalid configuration makes LDTILECFG fault (#GP), so every
// configuration is checked here before it reaches the instruction.
//
// Plain header: AMX kernel translation units include it.
#include <cstddef>
#include <cstdint>

namespace brick {

struct alignas(64) AmxTileConfig {
  std::uint8_t palette_id = 0;        // 0 releases the tiles, 1 is the only palette defined so far
  std::uint8_t start_row = 0;         // restart point after a fault inside a tile load; 0 otherwise
  std::uint8_t reserved[14] = {};     // must be zero
  std::uint16_t colsb[16] = {};       // bytes per row of tile t; only t < 8 exist in palette 1
  std::uint8_t rows[16] = {};         // rows of tile t; only t < 8 exist in palette 1
};
static_assert(sizeof(AmxTileConfig) == 64);
static_assert(offsetof(AmxTileConfig, palette_id) == 0);
static_assert(offsetof(AmxTileConfig, start_row) == 1);
static_assert(offsetof(AmxTileConfig, reserved) == 2);
static_assert(offsetof(AmxTileConfig, colsb) == 16);
static_assert(offsetof(AmxTileConfig, rows) == 48);

inline constexpr int kAmxPalette1Tiles = 8;
inline constexpr int kAmxMaxRows = 16;
inline constexpr int kAmxMaxBytesPerRow = 64;

enum class TileConfigProblem : std::uint8_t {
  None,
  UnknownPalette,      // palette_id is neither 0 nor 1
  ReleaseNotEmpty,     // palette 0 (release) with any other byte set
  StartRowNotZero,
  ReservedNotZero,     // one of bytes 2..15
  TileOutsidePalette,  // rows or colsb set for a tile index >= 8
  TooManyRows,         // rows > 16
  RowTooWide,          // colsb > 64
  HalfConfigured,      // exactly one of rows and colsb is zero: an unused tile has both zero
};

struct TileConfigCheck {
  TileConfigProblem problem = TileConfigProblem::None;
  int tile = -1;   // the tile (or reserved byte) at fault; -1 when the problem is not per tile
  int value = 0;   // the offending value
  int limit = 0;   // the limit it broke, where there is one
  constexpr bool ok() const noexcept { return problem == TileConfigProblem::None; }
};

// The first rule `config` breaks, in byte order, or ok().
constexpr TileConfigCheck check_tile_config(const AmxTileConfig& config) noexcept {
  using P = TileConfigProblem;
  if (config.palette_id > 1) return {P::UnknownPalette, -1, config.palette_id, 1};
  if (config.palette_id == 0) {
    bool empty = config.start_row == 0;
    for (auto b : config.reserved) empty = empty && b == 0;
    for (auto c : config.colsb) empty = empty && c == 0;
    for (auto r : config.rows) empty = empty && r == 0;
    return empty ? TileConfigCheck{} : TileConfigCheck{P::ReleaseNotEmpty, -1, 0, 0};
  }
  if (config.start_row != 0) return {P::StartRowNotZero, -1, config.start_row, 0};
  for (int i = 0; i < 14; ++i) {
    if (config.reserved[i] != 0) return {P::ReservedNotZero, i + 2, config.reserved[i], 0};
  }
  for (int t = 0; t < 16; ++t) {
    const int rows = config.rows[t];
    const int colsb = config.colsb[t];
    if (t >= kAmxPalette1Tiles) {
      if (rows != 0 || colsb != 0) return {P::TileOutsidePalette, t, rows != 0 ? rows : colsb, kAmxPalette1Tiles};
      continue;
    }
    if (rows > kAmxMaxRows) return {P::TooManyRows, t, rows, kAmxMaxRows};
    if (colsb > kAmxMaxBytesPerRow) return {P::RowTooWide, t, colsb, kAmxMaxBytesPerRow};
    if ((rows == 0) != (colsb == 0)) return {P::HalfConfigured, t, rows == 0 ? colsb : rows, 0};
  }
  return {};
}

// The shape of one tile of a palette-1 configuration.
struct TileShape {
  int rows = 0;
  int bytes_per_row = 0;
};

// A palette-1 configuration for tiles 0..count-1 (the rest unused). Throws InvalidArgument naming the
// tile and the limit it breaks (count > 8, rows outside 1..16, bytes per row outside 1..64).
AmxTileConfig make_amx_tile_config(const TileShape* shapes, std::size_t count);

// Throws InvalidArgument with a message naming the tile and the limit when check_tile_config fails.
void validate_tile_config(const AmxTileConfig& config);

}  // namespace brick
