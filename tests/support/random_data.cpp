#include "support/random_data.hpp"

#include <random>

namespace brick::test {

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

std::vector<float> normal(std::size_t n, std::uint64_t seed, float mean, float stddev) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

std::vector<Pattern> adversarial_patterns(std::size_t n, std::uint64_t seed) {
  std::vector<Pattern> patterns;
  patterns.push_back({"zeros", std::vector<float>(n, 0.0f)});
  patterns.push_back({"constant", std::vector<float>(n, 0.75f)});
  std::vector<float> ramp(n);
  for (std::size_t i = 0; i < n; ++i) ramp[i] = (static_cast<float>(i) - n / 2.0f) / 64.0f;
  patterns.push_back({"ramp", ramp});
  std::vector<float> outlier = uniform(n, seed, -0.01f, 0.01f);
  outlier[n / 3] = 50.0f;
  patterns.push_back({"outlier", outlier});
  std::vector<float> negative(n);
  for (std::size_t i = 0; i < n; ++i) negative[i] = -1.0f - 0.01f * static_cast<float>(i % 97);
  patterns.push_back({"negative", negative});
  patterns.push_back({"tiny", uniform(n, seed + 1, -1e-39f, 1e-39f)});
  patterns.push_back({"huge", uniform(n, seed + 2, -1e30f, 1e30f)});
  patterns.push_back({"uniform", uniform(n, seed + 3)});
  patterns.push_back({"normal", normal(n, seed + 4)});
  return patterns;
}

}  // namespace brick::test
