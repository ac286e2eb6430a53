#include "brick/core/backend.hpp"

#include <gtest/gtest.h>

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
  EXPECT_EQ(detect_cpu_features().avx2, f.avx2);
  EXPECT_NE(describe(f), "");
}

}  // namespace
}  // namespace brick
