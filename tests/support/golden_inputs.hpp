#pragma once
// The inputs of the golden vectors in tests/quant/data/ (see the README there), shared by their
// generator (tests/tools/golden_vectors.cpp) and the tests that check Brick against them.
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace brick::test {

// ggml's tests/test-quantize-fns.cpp generator, evaluated as in C: cosf in float, the sum in
// double, rounded to float.
inline std::vector<float> golden_cosine_row(std::size_t n, float phase) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(0.1 + 2 * std::cos(static_cast<float>(i) + phase));
  return x;
}

// 256-value edge rows: "zeros", "ramp", "outlier", "neg" (those of kquant-vectors.txt), and for
// weight-type-vectors.txt also "nan" (NaNs at 3, 27, 100 and 255), "inf" (+inf at 5, -inf at 64),
// "tiny" (subnormals between normal values) and "huge" (alternating +-3e38).
inline std::vector<float> golden_edge_row(const std::string& name) {
  constexpr std::size_t kN = 256;
  std::vector<float> x(kN);
  for (std::size_t i = 0; i < kN; ++i) {
    const int k = static_cast<int>(i);
    if (name == "zeros") x[i] = 0.0f;
    if (name == "ramp") x[i] = static_cast<float>(k - 128) / 64;
    if (name == "outlier") x[i] = static_cast<float>(0.01 * ((k * 37) % 17 - 8));
    if (name == "neg") x[i] = static_cast<float>(-1 - 0.01 * k);
    if (name == "nan" || name == "inf") x[i] = static_cast<float>(0.1 + 2 * std::cos(static_cast<float>(i)));
    if (name == "tiny") x[i] = i % 2 == 0 ? 1e-40f * static_cast<float>(k - 128) : 1e-3f * static_cast<float>(k % 7 - 3);
    if (name == "huge") x[i] = i % 2 == 0 ? 3e38f : -3e38f;
  }
  if (name == "outlier") x[100] = 50.0f;
  if (name == "nan") {
    for (const std::size_t i : {3u, 27u, 100u, 255u}) x[i] = std::numeric_limits<float>::quiet_NaN();
  }
  if (name == "inf") {
    x[5] = std::numeric_limits<float>::infinity();
    x[64] = -std::numeric_limits<float>::infinity();
  }
  return x;
}

}  // namespace brick::test
