// The only AMX instructions in Brick's runtime. Callers (ScopedTileConfig) run them only after
// amx_support() says the CPU, XCR0 and the kernel's permission all allow tile state. The
// configuration is passed as raw bytes so that no project inline code is compiled with AMX flags.
#include <immintrin.h>

#include "runtime/simd_config/tile_config_amx.hpp"

namespace brick::detail {

void load_tile_config_amx(const void* config64) { _tile_loadconfig(config64); }

void store_tile_config_amx(void* config64) { _tile_storeconfig(config64); }

void release_tiles_amx() { _tile_release(); }

}  // namespace brick::detail
