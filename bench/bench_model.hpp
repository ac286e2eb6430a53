#pragma once
// Synthetic llama models for the benchmarks that run a decoder: written once into the build folder
// (BRICK_BENCH_DIR) under the spec's name and opened from there afterwards.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "brick/model/llama_model.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::bench {

inline const model::LlamaModel& bench_model(const model::SyntheticModelSpec& spec) {
  static std::map<std::string, std::unique_ptr<model::LlamaModel>> models;
  std::unique_ptr<model::LlamaModel>& slot = models[spec.name()];
  if (!slot) {
    const std::filesystem::path path = std::filesystem::path(BRICK_BENCH_DIR) / (spec.name() + ".gguf");
    if (!std::filesystem::exists(path)) {
      ThreadPool pool(2);
      model::write_synthetic_model(spec, path, pool);
    }
    slot = std::make_unique<model::LlamaModel>(model::LlamaModel::open(path));
  }
  return *slot;
}

template <class T>
T median(std::vector<T> values) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2), values.end());
  return values[values.size() / 2];
}

}  // namespace brick::bench
