#pragma once
// Entry points of the AMX translation unit (tile_config_amx.cpp); each takes the 64-byte LDTILECFG
// operand (an AmxTileConfig).
namespace brick::detail {

void load_tile_config_amx(const void* config64);
void store_tile_config_amx(void* config64);
void release_tiles_amx();

}  // namespace brick::detail
