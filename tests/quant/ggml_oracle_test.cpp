// The ggml oracle itself: it loads the variant this CPU should use, its typed wrappers agree with
// its raw entry points, and its graph mat-vec computes what the dequantized matrix says.
#include "support/ggml_oracle.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "brick/core/error.hpp"
#include "support/random_data.hpp"

namespace brick::test {
namespace {

using quant::BlockQ5K;
using quant::BlockQ6K;
using quant::BlockQ8K;
using quant::kBlockSize;

TEST(GgmlOracle, LoadsTheBestCpuVariant) {
  const GgmlOracle& oracle = GgmlOracle::load();
  std::cout << "[ oracle   ] " << oracle.describe() << "\n";
  EXPECT_FALSE(oracle.version().empty());
  EXPECT_NE(oracle.cpu_library_path().find("libggml-cpu-" + oracle.cpu_variant() + ".so"),
            std::string::npos);
  const auto preference = GgmlOracle::cpu_variant_preference(cpu_features());
  ASSERT_FALSE(preference.empty());
  if (std::getenv("BRICK_ORACLE_CPU") == nullptr) {
    EXPECT_EQ(oracle.cpu_variant(), preference.front());
  }
}

TEST(GgmlOracle, VariantPreferenceFollowsCpuFeatures) {
  CpuFeatures baseline;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(baseline), std::vector<std::string>{"x64"});
  CpuFeatures avx2 = baseline;
  avx2.avx = avx2.avx2 = avx2.fma = avx2.f16c = true;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(avx2), (std::vector<std::string>{"haswell", "x64"}));
  CpuFeatures avx512 = avx2;
  avx512.avx512f = avx512.avx512bw = avx512.avx512dq = avx512.avx512vl = true;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(avx512).front(), "skylakex");
  avx512.avx512vnni = true;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(avx512).front(), "icelake");
  avx512.avx512bf16 = true;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(avx512),
            (std::vector<std::string>{"zen4", "icelake", "skylakex", "haswell", "x64"}));
  avx512.amx_tile = avx512.amx_int8 = avx512.avxvnni = true;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(avx512),
            (std::vector<std::string>{"sapphirerapids", "zen4", "icelake", "skylakex", "alderlake",
                                      "haswell", "x64"}));
  avx2.avxvnni = true;
  EXPECT_EQ(GgmlOracle::cpu_variant_preference(avx2),
            (std::vector<std::string>{"alderlake", "haswell", "x64"}));
}

TEST(GgmlOracle, WrappersRejectMismatchedSizes) {
  const GgmlOracle& oracle = GgmlOracle::load();
  std::vector<float> x(kBlockSize + 1);
  std::vector<BlockQ6K> q6(1);
  EXPECT_THROW(oracle.quantize_q6k_ref(x, q6), InvalidArgument);
  std::vector<BlockQ8K> q8(2);
  EXPECT_THROW(oracle.vec_dot_q6k_q8k(q6, q8), InvalidArgument);
}

// ggml_quantize_chunk without an importance matrix is the row reference, row by row.
TEST(GgmlOracle, QuantizeChunkIsTheRowReference) {
  const GgmlOracle& oracle = GgmlOracle::load();
  const std::vector<float> x = normal(4 * 1024, 7);
  std::vector<BlockQ6K> chunk(x.size() / kBlockSize), rows(x.size() / kBlockSize);
  oracle.quantize_chunk_q6k(x, 1024, chunk);
  oracle.quantize_q6k_ref(x, rows);
  EXPECT_EQ(std::memcmp(chunk.data(), rows.data(), chunk.size() * sizeof(BlockQ6K)), 0);
}

// y = W x through ggml's graph (which quantizes x to Q8_K internally) against a double-precision
// product of the dequantized W with the dequantized Q8_K x.
TEST(GgmlOracle, GraphMatVecMatchesDequantizedProduct) {
  const GgmlOracle& oracle = GgmlOracle::load();
  constexpr std::size_t kRows = 64, kCols = 1024;
  const std::vector<float> w = normal(kRows * kCols, 11);
  const std::vector<float> x = normal(kCols, 12);
  std::vector<BlockQ6K> wq(w.size() / kBlockSize);
  oracle.quantize_q6k_ref(w, wq);
  std::vector<BlockQ8K> xq(kCols / kBlockSize);
  oracle.quantize_q8k(x, xq);
  std::vector<float> wd(w.size()), xd(kCols);
  oracle.dequantize_q6k(wq, wd);
  oracle.dequantize_q8k(xq, xd);

  GgmlMatVec matvec(oracle, GgmlType::Q6_K, kRows, kCols);
  ASSERT_EQ(matvec.weights().size(), wq.size() * sizeof(BlockQ6K));
  std::memcpy(matvec.weights().data(), wq.data(), matvec.weights().size());
  std::copy(x.begin(), x.end(), matvec.input().begin());
  for (const bool pooled : {false, true}) {
    for (const int threads : {1, 2}) {
      if (pooled) {
        matvec.compute_pooled(threads);
      } else {
        matvec.compute(threads);
      }
      for (std::size_t r = 0; r < kRows; ++r) {
        double expected = 0.0;
        for (std::size_t c = 0; c < kCols; ++c) expected += double(wd[r * kCols + c]) * xd[c];
        ASSERT_NEAR(matvec.output()[r], expected, 1e-5 * (1.0 + std::fabs(expected)))
            << "row " << r << (pooled ? " pooled" : " with_ctx") << " threads " << threads;
      }
    }
  }
}

// The backend-API mat-vec (what llama.cpp runs, weights possibly repacked by ggml for its gemv
// kernels) computes the same products as the plain graph mat-vec, for both weight types.
template <typename Block>
void expect_backend_matvec_agrees(const GgmlOracle& oracle, GgmlType type,
                                  void (GgmlOracle::*quantize)(std::span<const float>,
                                                               std::span<Block>) const) {
  constexpr std::size_t kRows = 64, kCols = 2048;
  const std::vector<float> w = normal(kRows * kCols, 21, 0.0f, 0.05f);
  const std::vector<float> x = normal(kCols, 22);
  std::vector<Block> wq(w.size() / kBlockSize);
  (oracle.*quantize)(w, wq);
  const auto bytes = std::as_bytes(std::span<const Block>(wq));

  GgmlMatVec plain(oracle, type, kRows, kCols);
  std::memcpy(plain.weights().data(), bytes.data(), bytes.size());
  std::copy(x.begin(), x.end(), plain.input().begin());
  plain.compute(1);
  for (const bool repack : {false, true}) {
    GgmlBackendMatVec backend(oracle, type, kRows, kCols, bytes, repack);
    std::cout << "[ oracle   ] type " << static_cast<int>(type) << " buffer "
              << backend.weight_buffer_type() << (backend.repacked() ? " (repacked)\n" : "\n");
    if (!repack) {
      EXPECT_FALSE(backend.repacked());
    }
    std::copy(x.begin(), x.end(), backend.input().begin());
    for (const int threads : {1, 2}) {
      backend.compute(threads);
      for (std::size_t r = 0; r < kRows; ++r) {
        ASSERT_NEAR(backend.output()[r], plain.output()[r],
                    1e-5 * (1.0 + std::fabs(plain.output()[r])))
            << "row " << r << " repack " << repack << " threads " << threads;
      }
    }
  }
}

TEST(GgmlOracle, BackendMatVecAgreesWithGraphMatVec) {
  const GgmlOracle& oracle = GgmlOracle::load();
  expect_backend_matvec_agrees<BlockQ5K>(oracle, GgmlType::Q5_K, &GgmlOracle::quantize_q5k_ref);
  expect_backend_matvec_agrees<BlockQ6K>(oracle, GgmlType::Q6_K, &GgmlOracle::quantize_q6k_ref);
}

}  // namespace
}  // namespace brick::test
