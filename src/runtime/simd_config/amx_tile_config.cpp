#include "brick/runtime/simd_config/amx_tile_config.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {
namespace {

std::string describe(const TileConfigCheck& check) {
  using P = TileConfigProblem;
  switch (check.problem) {
    case P::None: return "valid";
    case P::UnknownPalette: return fmt::format("palette {} is not supported (only 0 and 1)", check.value);
    case P::ReleaseNotEmpty: return "palette 0 (release) must have every other byte zero";
    case P::StartRowNotZero: return fmt::format("start_row is {}, must be 0", check.value);
    case P::ReservedNotZero: return fmt::format("reserved byte {} is {}, must be 0", check.tile, check.value);
    case P::TileOutsidePalette:
      return fmt::format("tile {} is configured but palette 1 has only {} tiles", check.tile, check.limit);
    case P::TooManyRows:
      return fmt::format("tile {}: {} rows exceeds the limit of {}", check.tile, check.value, check.limit);
    case P::RowTooWide:
      return fmt::format("tile {}: {} bytes per row exceeds the limit of {}", check.tile, check.value, check.limit);
    case P::HalfConfigured:
      return fmt::format("tile {}: rows and bytes per row must both be zero (unused) or both non-zero", check.tile);
  }
  return "unknown problem";
}

}  // namespace

AmxTileConfig make_amx_tile_config(const TileShape* shapes, std::size_t count) {
  if (count > static_cast<std::size_t>(kAmxPalette1Tiles)) {
    throw InvalidArgument(fmt::format("AMX tile config: {} tiles requested, palette 1 has {}", count,
                                      kAmxPalette1Tiles));
  }
  AmxTileConfig config;
  config.palette_id = 1;
  for (std::size_t t = 0; t < count; ++t) {
    const TileShape& shape = shapes[t];
    if (shape.rows < 1 || shape.rows > kAmxMaxRows) {
      throw InvalidArgument(fmt::format("AMX tile config: tile {}: {} rows is outside 1..{}", t, shape.rows,
                                        kAmxMaxRows));
    }
    if (shape.bytes_per_row < 1 || shape.bytes_per_row > kAmxMaxBytesPerRow) {
      throw InvalidArgument(fmt::format("AMX tile config: tile {}: {} bytes per row is outside 1..{}", t,
                                        shape.bytes_per_row, kAmxMaxBytesPerRow));
    }
    config.rows[t] = static_cast<std::uint8_t>(shape.rows);
    config.colsb[t] = static_cast<std::uint16_t>(shape.bytes_per_row);
  }
  return config;
}

void validate_tile_config(const AmxTileConfig& config) {
  const TileConfigCheck check = check_tile_config(config);
  if (!check.ok()) throw InvalidArgument("AMX tile config: " + describe(check));
}

}  // namespace brick
