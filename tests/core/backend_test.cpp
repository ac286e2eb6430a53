#include "brick/core/backend.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "brick/core/error.hpp"

namespace brick {
namespace {

CpuFeatures avx2_machine() {
  CpuFeatures f;
  f.sse42 = f.avx = f.avx2 = f.fma = f.f16c = true;
  return f;
}

CpuFeatures avx512_machine() {
  CpuFeatures f = avx2_machine();
  f.avx512f = f.avx512bw = f.avx512dq = f.avx512vl = true;
  return f;
}

TEST(Backend, NamesRoundTrip) {
  for (Backend b : {Backend::Auto, Backend::Scalar, Backend::Avx2, Backend::Avx512}) {
    EXPECT_EQ(parse_backend(name(b)), b);
  }
  EXPECT_EQ(parse_backend("AVX512"), Backend::Avx512);
  EXPECT_EQ(parse_backend("sse"), std::nullopt);
  EXPECT_EQ(parse_backend(""), std::nullopt);
}

TEST(Backend, AValueOutsideTheEnumIsAnInvalidArgument) {
  EXPECT_THROW(resolve(static_cast<Backend>(99), avx512_machine(), std::nullopt), InvalidArgument);
}

TEST(Backend, AutoPicksTheBestSupported) {
  EXPECT_EQ(resolve(Backend::Auto, CpuFeatures{}, std::nullopt), Backend::Scalar);
  EXPECT_EQ(resolve(Backend::Auto, avx2_machine(), std::nullopt), Backend::Avx2);
  EXPECT_EQ(resolve(Backend::Auto, avx512_machine(), std::nullopt), Backend::Avx512);
}

TEST(Backend, AvxWithoutFmaIsNotAvx2Backend) {
  CpuFeatures f = avx2_machine();
  f.fma = false;
  EXPECT_EQ(best_backend(f), Backend::Scalar);
  EXPECT_EQ(missing_feature(Backend::Avx2, f), "FMA");
}

TEST(Backend, Avx512NeedsAllFourSubsets) {
  CpuFeatures f = avx512_machine();
  f.avx512vl = false;
  EXPECT_EQ(best_backend(f), Backend::Avx2);
  EXPECT_EQ(missing_feature(Backend::Avx512, f), "AVX-512VL");
}

TEST(Backend, ForcedChoiceOverridesAuto) {
  EXPECT_EQ(resolve(Backend::Auto, avx512_machine(), "scalar"), Backend::Scalar);
  EXPECT_EQ(resolve(Backend::Auto, avx512_machine(), "AVX2"), Backend::Avx2);
  EXPECT_EQ(resolve(Backend::Auto, avx512_machine(), "auto"), Backend::Avx512);
}

TEST(Backend, ExplicitRequestIsHonouredDespiteForcedChoice) {
  EXPECT_EQ(resolve(Backend::Scalar, avx512_machine(), "avx512"), Backend::Scalar);
  EXPECT_EQ(resolve(Backend::Avx2, avx512_machine(), "scalar"), Backend::Avx2);
}

TEST(Backend, UnsupportedRequestIsATypedErrorNamingTheFeature) {
  try {
    resolve(Backend::Avx512, avx2_machine(), std::nullopt);
    FAIL() << "expected BackendUnavailable";
  } catch (const BackendUnavailable& e) {
    EXPECT_EQ(e.code(), ErrorCode::BackendUnavailable);
    EXPECT_EQ(e.missing_feature(), "AVX-512F");
    EXPECT_NE(std::string(e.what()).find("avx512"), std::string::npos);
  }
  EXPECT_THROW(resolve(Backend::Auto, CpuFeatures{}, "avx2"), BackendUnavailable);
}

TEST(Backend, UnknownForcedValueIsInvalidArgument) {
  try {
    resolve(Backend::Auto, avx2_machine(), "neon");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("BRICK_BACKEND='neon'"), std::string::npos);
  }
}

TEST(Backend, ProcessResolutionIsSupportedOnThisMachine) {
  const Backend b = resolve(Backend::Auto);
  EXPECT_NE(b, Backend::Auto);
  EXPECT_TRUE(is_supported(b));
}

TEST(CpuFeatures, ImpliedFeaturesAreConsistent) {
  const CpuFeatures& f = cpu_features();
  EXPECT_TRUE(!f.avx2 || f.avx);
  EXPECT_TRUE(!(f.avx512bw || f.avx512dq || f.avx512vl || f.avx512vnni) || f.avx512f);
  EXPECT_TRUE(!f.avx512f || f.avx);
  EXPECT_FALSE(f.vendor.empty());
  const char* disabled = std::getenv("BRICK_CPU_DISABLE");
  EXPECT_EQ(describe(without_features(detect_cpu_features(), disabled == nullptr ? "" : disabled)), describe(f));
  EXPECT_NE(describe(f), "");
}

// A machine with every feature, so that each one's removal shows.
CpuFeatures every_feature() {
  CpuFeatures f;
  for (bool CpuFeatures::*member :
       {&CpuFeatures::sse42, &CpuFeatures::avx, &CpuFeatures::avx2, &CpuFeatures::fma, &CpuFeatures::f16c,
        &CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
        &CpuFeatures::avx512vnni, &CpuFeatures::avx512bf16, &CpuFeatures::gfni, &CpuFeatures::avxvnni,
        &CpuFeatures::amx_tile, &CpuFeatures::amx_int8, &CpuFeatures::amx_bf16, &CpuFeatures::invariant_tsc}) {
    f.*member = true;
  }
  return f;
}

TEST(CpuFeatures, WithoutNothingIsUnchanged) {
  const CpuFeatures all = every_feature();
  EXPECT_EQ(describe(without_features(all, "")), describe(all));
  EXPECT_EQ(describe(without_features(all, " , ,")), describe(all));
  EXPECT_EQ(describe(without_features(detect_cpu_features(), "")), describe(detect_cpu_features()));
}

TEST(CpuFeatures, WithoutAFeatureTakesTheOnesThatNeedIt) {
  const CpuFeatures all = every_feature();
  EXPECT_EQ(describe(without_features(all, "avxvnni")),
            "sse4.2 avx avx2 fma f16c avx512f avx512bw avx512dq avx512vl avx512vnni avx512bf16 gfni amx-tile "
            "amx-int8 amx-bf16 invariant-tsc");
  EXPECT_EQ(describe(without_features(all, "avx512f")),
            "sse4.2 avx avx2 fma f16c gfni avxvnni amx-tile amx-int8 amx-bf16 invariant-tsc");
  EXPECT_EQ(describe(without_features(all, "avx2")),
            "sse4.2 avx fma f16c gfni amx-tile amx-int8 amx-bf16 invariant-tsc");
  EXPECT_EQ(describe(without_features(all, "avx")), "sse4.2 gfni amx-tile amx-int8 amx-bf16 invariant-tsc");
  EXPECT_EQ(describe(without_features(all, "amx-tile,invariant-tsc")),
            "sse4.2 avx avx2 fma f16c avx512f avx512bw avx512dq avx512vl avx512vnni avx512bf16 gfni avxvnni");
  EXPECT_EQ(describe(without_features(all, "avxvnni avx512vnni, avx512bf16")),
            "sse4.2 avx avx2 fma f16c avx512f avx512bw avx512dq avx512vl gfni amx-tile amx-int8 amx-bf16 "
            "invariant-tsc");
}

TEST(CpuFeatures, WithoutTheAvx512FeaturesTheBestBackendIsAvx2) {
  const CpuFeatures all = every_feature();
  EXPECT_EQ(best_backend(all), Backend::Avx512);
  EXPECT_EQ(best_backend(without_features(all, "avx512bw")), Backend::Avx2);
  EXPECT_EQ(best_backend(without_features(all, "avx512f")), Backend::Avx2);
  EXPECT_EQ(best_backend(without_features(all, "fma")), Backend::Scalar);
  EXPECT_THROW(resolve(Backend::Avx512, without_features(all, "avx512f"), std::nullopt), BackendUnavailable);
}

TEST(CpuFeatures, AnUnknownNameIsATypedErrorThatListsTheFeatures) {
  try {
    without_features(every_feature(), "avx2,neon");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'neon' is not a CPU feature"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("avxvnni"), std::string::npos) << e.what();
  }
  EXPECT_THROW(without_features(every_feature(), "AVX2"), InvalidArgument);
}

}  // namespace
}  // namespace brick
