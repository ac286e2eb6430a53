#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "brick/core/cpu_features.hpp"
#include "brick/core/error.hpp"
#include "brick/runtime/simd_config/amx_support.hpp"
#include "brick/runtime/simd_config/amx_tile_config.hpp"

namespace brick {
namespace {

AmxTileConfig full_config() {
  std::vector<TileShape> shapes(8, TileShape{16, 64});
  return make_amx_tile_config(shapes.data(), shapes.size());
}

TEST(AmxTileConfig, LayoutIsTheLdtilecfgOperand) {
  std::vector<TileShape> shapes = {{16, 64}, {8, 32}, {1, 4}};
  const AmxTileConfig config = make_amx_tile_config(shapes.data(), shapes.size());
  unsigned char bytes[64];
  std::memcpy(bytes, &config, 64);
  EXPECT_EQ(bytes[0], 1);  // palette
  EXPECT_EQ(bytes[1], 0);  // start_row
  for (int i = 2; i < 16; ++i) EXPECT_EQ(bytes[i], 0) << "reserved byte " << i;
  EXPECT_EQ(bytes[16] | (bytes[17] << 8), 64);  // tile 0 colsb, little-endian
  EXPECT_EQ(bytes[18] | (bytes[19] << 8), 32);
  EXPECT_EQ(bytes[20] | (bytes[21] << 8), 4);
  for (int i = 22; i < 48; ++i) EXPECT_EQ(bytes[i], 0) << "byte " << i;
  EXPECT_EQ(bytes[48], 16);  // tile 0 rows
  EXPECT_EQ(bytes[49], 8);
  EXPECT_EQ(bytes[50], 1);
  for (int i = 51; i < 64; ++i) EXPECT_EQ(bytes[i], 0) << "byte " << i;
  EXPECT_TRUE(check_tile_config(config).ok());
  EXPECT_NO_THROW(validate_tile_config(config));
  EXPECT_TRUE(check_tile_config(full_config()).ok());
  static_assert(check_tile_config(AmxTileConfig{}).ok());  // palette 0, all zero: release
}

TEST(AmxTileConfig, BuilderRejectsShapesOutsideTheLimitsNamingTileAndLimit) {
  auto message = [](std::vector<TileShape> shapes) {
    try {
      make_amx_tile_config(shapes.data(), shapes.size());
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{16, 64}, {17, 64}}), "AMX tile config: tile 1: 17 rows is outside 1..16");
  EXPECT_EQ(message({{16, 65}}), "AMX tile config: tile 0: 65 bytes per row is outside 1..64");
  EXPECT_EQ(message({{0, 64}}), "AMX tile config: tile 0: 0 rows is outside 1..16");
  EXPECT_EQ(message(std::vector<TileShape>(9, {1, 1})), "AMX tile config: 9 tiles requested, palette 1 has 8");
}

TEST(AmxTileConfig, EveryRuleIsCheckedWithTileAndLimit) {
  using P = TileConfigProblem;
  struct Case {
    const char* what;
    void (*mutate)(AmxTileConfig&);
    P problem;
    int tile;
    const char* message_part;
  };
  const Case cases[] = {
      {"palette 2", [](AmxTileConfig& c) { c.palette_id = 2; }, P::UnknownPalette, -1, "palette 2"},
      {"start row", [](AmxTileConfig& c) { c.start_row = 3; }, P::StartRowNotZero, -1, "start_row is 3"},
      {"reserved", [](AmxTileConfig& c) { c.reserved[5] = 1; }, P::ReservedNotZero, 7, "reserved byte 7"},
      {"tile 8 rows", [](AmxTileConfig& c) { c.rows[8] = 1; }, P::TileOutsidePalette, 8, "tile 8"},
      {"tile 15 colsb", [](AmxTileConfig& c) { c.colsb[15] = 4; }, P::TileOutsidePalette, 15, "only 8 tiles"},
      {"rows", [](AmxTileConfig& c) { c.rows[6] = 17; }, P::TooManyRows, 6, "tile 6: 17 rows exceeds the limit of 16"},
      {"colsb", [](AmxTileConfig& c) { c.colsb[2] = 128; }, P::RowTooWide, 2,
       "tile 2: 128 bytes per row exceeds the limit of 64"},
      {"rows only", [](AmxTileConfig& c) { c.colsb[3] = 0; }, P::HalfConfigured, 3, "tile 3"},
      {"colsb only", [](AmxTileConfig& c) { c.rows[4] = 0; }, P::HalfConfigured, 4, "tile 4"},
      {"release with data", [](AmxTileConfig& c) { c.palette_id = 0; }, P::ReleaseNotEmpty, -1, "palette 0"},
  };
  for (const Case& c : cases) {
    AmxTileConfig config = full_config();
    c.mutate(config);
    const TileConfigCheck check = check_tile_config(config);
    EXPECT_EQ(check.problem, c.problem) << c.what;
    EXPECT_EQ(check.tile, c.tile) << c.what;
    try {
      validate_tile_config(config);
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos) << c.what << ": " << e.what();
    }
  }
}

TEST(AmxTileConfig, SingleByteCorruptionsAreValidOrCaught) {
  // Property: flipping any bit of a valid config either leaves a config that obeys every rule (a
  // different legal shape) or is reported; never a silently accepted out-of-range tile.
  const AmxTileConfig base = full_config();
  for (int byte = 0; byte < 64; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      AmxTileConfig config = base;
      reinterpret_cast<unsigned char*>(&config)[byte] ^= static_cast<unsigned char>(1u << bit);
      const TileConfigCheck check = check_tile_config(config);
      if (!check.ok()) continue;
      ASSERT_EQ(config.palette_id, 1) << "byte " << byte << " bit " << bit;
      for (int t = 0; t < 16; ++t) {
        ASSERT_LE(config.rows[t], t < 8 ? 16 : 0) << "byte " << byte << " bit " << bit;
        ASSERT_LE(config.colsb[t], t < 8 ? 64 : 0) << "byte " << byte << " bit " << bit;
        ASSERT_EQ(config.rows[t] == 0, config.colsb[t] == 0);
      }
    }
  }
}

TEST(AmxSupport, CpuWithoutAmxNeverAsksForPermission) {
  int requests = 0;
  const auto count = [&requests] {
    ++requests;
    return 0;
  };
  const AmxSupport support = evaluate_amx_support({false, false, true, true}, count);
  EXPECT_EQ(support.status, AmxStatus::CpuLacksAmx);
  EXPECT_EQ(support.reason, "CPU lacks AMX-TILE");
  EXPECT_FALSE(support.usable());
  EXPECT_FALSE(support.int8);
  EXPECT_EQ(requests, 0);
  EXPECT_EQ(describe(support), "no: CPU lacks AMX-TILE");
}

TEST(AmxSupport, OsWithoutTileStateNeverAsksForPermission) {
  int requests = 0;
  const AmxSupport support = evaluate_amx_support({true, false, true, true}, [&requests] {
    ++requests;
    return 0;
  });
  EXPECT_EQ(support.status, AmxStatus::OsLacksTileState);
  EXPECT_EQ(support.reason, "OS has not enabled tile state in XCR0");
  EXPECT_EQ(requests, 0);
}

TEST(AmxSupport, DeniedPermissionCarriesTheErrnoText) {
  const AmxSupport support = evaluate_amx_support({true, true, true, false}, [] { return EPERM; });
  EXPECT_EQ(support.status, AmxStatus::PermissionDenied);
  EXPECT_EQ(support.reason, "arch_prctl denied: Operation not permitted");
  EXPECT_FALSE(support.usable());
}

TEST(AmxSupport, AllThreeChecksPassingMeansUsable) {
  int requests = 0;
  const AmxSupport support = evaluate_amx_support({true, true, true, false}, [&requests] {
    ++requests;
    return 0;
  });
  EXPECT_TRUE(support.usable());
  EXPECT_TRUE(support.reason.empty());
  EXPECT_TRUE(support.int8);
  EXPECT_FALSE(support.bf16);
  EXPECT_EQ(requests, 1);
  EXPECT_EQ(describe(support), "yes (int8)");
}

TEST(AmxSupport, ThisMachineAgreesWithCpuFeatures) {
  const AmxSupport& support = amx_support();
  const AmxProbe probe = probe_amx();
  EXPECT_EQ(probe.os_has_tile_state, cpu_features().amx_tile);
  if (!cpu_features().amx_tile) {
    EXPECT_FALSE(support.usable());
    EXPECT_EQ(support.reason, probe.cpu_has_amx_tile ? "OS has not enabled tile state in XCR0" : "CPU lacks AMX-TILE");
  }
  if (support.usable()) {
    EXPECT_TRUE(cpu_features().amx_tile);
    EXPECT_EQ(request_amx_permission(), 0);  // idempotent once granted
  }
}

TEST(AmxSupport, ConcurrentFirstUseSeesOneAnswer) {
  std::vector<const AmxSupport*> seen(8);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&seen, t] { seen[t] = &amx_support(); });
  for (auto& thread : threads) thread.join();
  for (const AmxSupport* s : seen) EXPECT_EQ(s, seen[0]);
}

TEST(ScopedTileConfig, InvalidConfigIsRejectedBeforeAnyAmxCheck) {
  AmxTileConfig config = full_config();
  config.rows[0] = 20;
  EXPECT_THROW(ScopedTileConfig{config}, InvalidArgument);
}

// Where AMX is usable the configuration loads and reads back; elsewhere the loader refuses with the
// reason, having executed no tile instruction.
TEST(ScopedTileConfig, LoadsWhereAmxIsUsableElseFallsBackWithTheReason) {
  if (amx_support().usable()) {
    std::vector<TileShape> shapes = {{16, 64}, {4, 16}, {16, 32}};
    const AmxTileConfig config = make_amx_tile_config(shapes.data(), shapes.size());
    const ScopedTileConfig tiles(config);
    const AmxTileConfig stored = tiles.stored();
    EXPECT_EQ(std::memcmp(&stored, &config, sizeof config), 0);
    return;
  }
  try {
    ScopedTileConfig tiles(full_config());
    FAIL() << "tile config loaded without AMX";
  } catch (const BackendUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(amx_support().reason), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace brick
