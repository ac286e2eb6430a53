#pragma once
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "brick/core/op.hpp"

namespace brick::test {

// out = scale * x. The non-scalar backends add `drift` to every element, so tests can make a fast
// path diverge from the reference on purpose; `calls` counts runs per backend.
struct ScaleOp {
  struct Input {
    std::span<const float> x;
  };
  float scale = 2.0f;
  float drift = 0.0f;
  BrickId brick_id = BrickId::Activation;
  std::shared_ptr<std::vector<Backend>> calls = std::make_shared<std::vector<Backend>>();

  std::string_view name() const { return "scale"; }
  BrickId id() const { return brick_id; }
  std::size_t output_size(const Input& in) const { return in.x.size(); }
  OpCost cost(const Input& in) const {
    return {1, static_cast<double>(in.x.size()), 8.0 * static_cast<double>(in.x.size())};
  }
  void run(const Input& in, std::span<float> out, Backend backend) const {
    calls->push_back(backend);
    const float extra = backend == Backend::Scalar ? 0.0f : drift;
    for (std::size_t i = 0; i < in.x.size(); ++i) out[i] = scale * in.x[i] + extra;
  }
};
static_assert(BrickOp<ScaleOp>);

}  // namespace brick::test
