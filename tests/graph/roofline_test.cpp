#include "brick/graph/roofline.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "brick/core/cpu_features.hpp"
#include "brick/core/error.hpp"

namespace brick::graph {
namespace {

namespace fs = std::filesystem;

// 100 GFLOP/s and 10 GB/s: the ridge at 10 FLOPs per byte.
constexpr MachinePeaks kPeaks{100.0, 10.0};

TEST(Roofline, AKernelBelowTheRidgeIsMemoryBound) {
  // 1 FLOP per byte, 1 MB in 1 ms: 1 GB/s of a 10 GB/s roof.
  const Roofline r = roofline(1e6, 1e6, 1'000'000, kPeaks);
  EXPECT_EQ(r.bound, RooflineClass::MemoryBound);
  EXPECT_DOUBLE_EQ(r.intensity, 1.0);
  EXPECT_DOUBLE_EQ(r.gflops_per_second, 1.0);
  EXPECT_DOUBLE_EQ(r.gb_per_second, 1.0);
  EXPECT_DOUBLE_EQ(r.roof_gflops_per_second, 10.0);
  EXPECT_DOUBLE_EQ(r.fraction_of_roof, 0.1);
  EXPECT_EQ(describe(r), "memory-bound, 10% of the roof");
}

TEST(Roofline, AKernelAboveTheRidgeIsComputeBound) {
  // 100 FLOPs per byte: 1e8 FLOPs in 2 ms is 50 of the 100 GFLOP/s roof.
  const Roofline r = roofline(1e8, 1e6, 2'000'000, kPeaks);
  EXPECT_EQ(r.bound, RooflineClass::ComputeBound);
  EXPECT_DOUBLE_EQ(r.roof_gflops_per_second, 100.0);
  EXPECT_DOUBLE_EQ(r.fraction_of_roof, 0.5);
  // At the ridge point itself both roofs meet; it counts as compute-bound.
  EXPECT_EQ(roofline(1e7, 1e6, 1'000'000, kPeaks).bound, RooflineClass::ComputeBound);
  EXPECT_EQ(roofline(0.99e7, 1e6, 1'000'000, kPeaks).bound, RooflineClass::MemoryBound);
  EXPECT_DOUBLE_EQ(kPeaks.ridge_point(), 10.0);
}

TEST(Roofline, ACopyIsMemoryBoundAndNothingMeasuredIsUnknown) {
  const Roofline copy = roofline(0.0, 5e6, 1'000'000, kPeaks);  // 5 GB/s of 10
  EXPECT_EQ(copy.bound, RooflineClass::MemoryBound);
  EXPECT_DOUBLE_EQ(copy.fraction_of_roof, 0.5);
  EXPECT_EQ(roofline(1e6, 0.0, 1000, kPeaks).bound, RooflineClass::Unknown);
  EXPECT_EQ(roofline(1e6, 1e6, 0, kPeaks).bound, RooflineClass::Unknown);
  EXPECT_EQ(describe(roofline(1e6, 0.0, 1000, kPeaks)), "unknown");
  Node node;
  node.flops = 1e6;
  node.bytes = 1e6;
  node.duration_ns = 1'000'000;
  EXPECT_EQ(roofline(node, kPeaks).bound, RooflineClass::MemoryBound);
}

TEST(MachinePeaks, MustBeFiniteAndPositive) {
  EXPECT_NO_THROW(kPeaks.validate());
  EXPECT_THROW((MachinePeaks{0.0, 1.0}.validate()), InvalidArgument);
  EXPECT_THROW((MachinePeaks{1.0, -1.0}.validate()), InvalidArgument);
  EXPECT_THROW((MachinePeaks{std::nan(""), 1.0}.validate()), InvalidArgument);
}

class CachedPeaks : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / fmt::format("brick-peaks-{}", getpid());
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }
  fs::path cache() const { return folder_ / "peaks.json"; }
  void write(const nlohmann::json& json) const { std::ofstream(cache()) << json.dump(); }
  static std::string cpu() {
    return cpu_features().brand.empty() ? cpu_features().vendor : cpu_features().brand;
  }

  fs::path folder_;
};

TEST_F(CachedPeaks, AreReadBackForThisMachineAndMeasuredOtherwise) {
  ThreadPool pool(2);
  write({{"format", "brick.peaks"}, {"version", 1}, {"cpu", cpu()}, {"threads", 2},
         {"gflops_per_second", 123.0}, {"gb_per_second", 4.5}});
  const MachinePeaks cached = cached_peaks(cache(), pool);
  EXPECT_DOUBLE_EQ(cached.gflops_per_second, 123.0);
  EXPECT_DOUBLE_EQ(cached.gb_per_second, 4.5);

  // Another thread count: measured again, and the cache rewritten for this one.
  ThreadPool one(1);
  const MachinePeaks measured = cached_peaks(cache(), one);
  EXPECT_NO_THROW(measured.validate());
  EXPECT_GT(measured.ridge_point(), 0.0);
  std::ifstream in(cache());
  const auto json = nlohmann::json::parse(in);
  EXPECT_EQ(json["threads"], 1);
  EXPECT_DOUBLE_EQ(json["gb_per_second"].get<double>(), measured.gb_per_second);
  EXPECT_DOUBLE_EQ(cached_peaks(cache(), one).gflops_per_second, measured.gflops_per_second);
}

TEST_F(CachedPeaks, ABrokenCacheIsMeasuredAgainNotTrusted) {
  ThreadPool pool(1);
  for (const std::string text : {"", "{\"format\": \"brick.peaks\"", "[1]"}) {
    std::ofstream(cache()) << text;
    EXPECT_NO_THROW(cached_peaks(cache(), pool).validate()) << text;
  }
  write({{"format", "brick.peaks"}, {"version", 1}, {"cpu", cpu()}, {"threads", 1},
         {"gflops_per_second", -5.0}, {"gb_per_second", 4.5}});
  EXPECT_GT(cached_peaks(cache(), pool).gflops_per_second, 0.0);
  EXPECT_THROW(cached_peaks(folder_ / "missing" / "peaks.json", pool), IoError);
}

}  // namespace
}  // namespace brick::graph
