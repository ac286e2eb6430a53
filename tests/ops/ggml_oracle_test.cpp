// The float ops against real ggml (the oracle): its exported row kernels (ggml_vec_dot_f32,
// ggml_vec_silu_f32, ggml_vec_swiglu_f32, ggml_vec_soft_max_f32) and its graph ops (ggml_rms_norm
// followed by ggml_mul, ggml_rope_ext in both layouts, an f32 ggml_mul_mat), on every backend.
// These pin the semantics the headers claim: llama.cpp's rms_norm, ggml's rope angles and pairings.
#include "support/ggml_oracle.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "brick/ops/activation.hpp"
#include "brick/ops/dot.hpp"
#include "brick/ops/matvec.hpp"
#include "brick/ops/rms_norm.hpp"
#include "brick/ops/rope.hpp"
#include "brick/ops/softmax.hpp"
#include "ops/backend_test.hpp"
#include "support/random_data.hpp"

namespace brick::ops {
namespace {

using brick::test::GgmlOracle;
using test::BackendTest;

constexpr int kGgmlF32 = 0;
constexpr int kGgmlI32 = 26;
constexpr int kGgmlRopeNeox = 2;

// The ggml entry points this file needs beyond what GgmlOracle wraps, resolved from its libraries.
struct GgmlFloatOps {
  using Tensor = GgmlOracle::Tensor;
  using Context = GgmlOracle::Context;
  void (*vec_dot_f32)(int, float*, std::size_t, const float*, std::size_t, const float*,
                      std::size_t, int) = nullptr;
  void (*vec_silu_f32)(int, float*, const float*) = nullptr;
  void (*vec_swiglu_f32)(int, float*, const float*, const float*) = nullptr;
  double (*vec_soft_max_f32)(int, float*, const float*, float) = nullptr;
  Tensor* (*new_tensor_3d)(Context*, int, std::int64_t, std::int64_t, std::int64_t) = nullptr;
  Tensor* (*rms_norm)(Context*, Tensor*, float) = nullptr;
  Tensor* (*mul)(Context*, Tensor*, Tensor*) = nullptr;
  Tensor* (*rope_ext)(Context*, Tensor*, Tensor*, Tensor*, int, int, int, float, float, float,
                      float, float, float) = nullptr;

  static const GgmlFloatOps& load() {
    static const GgmlFloatOps ops = [] {
      const GgmlOracle& oracle = GgmlOracle::load();
      void* cpu = dlopen(oracle.cpu_library_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
      void* base = dlopen(oracle.base_library_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
      GgmlFloatOps o;
      resolve(cpu, "ggml_vec_dot_f32", o.vec_dot_f32);
      resolve(cpu, "ggml_vec_silu_f32", o.vec_silu_f32);
      resolve(cpu, "ggml_vec_swiglu_f32", o.vec_swiglu_f32);
      resolve(cpu, "ggml_vec_soft_max_f32", o.vec_soft_max_f32);
      resolve(base, "ggml_new_tensor_3d", o.new_tensor_3d);
      resolve(base, "ggml_rms_norm", o.rms_norm);
      resolve(base, "ggml_mul", o.mul);
      resolve(base, "ggml_rope_ext", o.rope_ext);
      return o;
    }();
    return ops;
  }

 private:
  template <class Fn>
  static void resolve(void* handle, const char* name, Fn& fn) {
    fn = handle != nullptr ? reinterpret_cast<Fn>(dlsym(handle, name)) : nullptr;
    if (fn == nullptr) throw std::runtime_error(std::string("ggml oracle lacks ") + name);
  }
};

// A one-op ggml graph on its own context: build it, fill the inputs, compute on one thread.
class GgmlGraph {
 public:
  explicit GgmlGraph(std::size_t bytes) : oracle_(GgmlOracle::load()) {
    context_ = oracle_.ggml_init({bytes + (4u << 20), nullptr, false});
    if (context_ == nullptr) throw std::runtime_error("ggml_init failed");
  }
  ~GgmlGraph() { oracle_.ggml_free(context_); }
  GgmlGraph(const GgmlGraph&) = delete;
  GgmlGraph& operator=(const GgmlGraph&) = delete;

  GgmlOracle::Context* context() const { return context_; }
  const GgmlOracle& oracle() const { return oracle_; }

  template <class T>
  std::span<T> data(GgmlOracle::Tensor* tensor, std::size_t n) const {
    return {static_cast<T*>(oracle_.ggml_get_data(tensor)), n};
  }

  void compute(GgmlOracle::Tensor* result) {
    GgmlOracle::Graph* graph = oracle_.ggml_new_graph(context_);
    oracle_.ggml_build_forward_expand(graph, result);
    ASSERT_EQ(oracle_.ggml_graph_compute_with_ctx(context_, graph, 1), 0);
  }

 private:
  const GgmlOracle& oracle_;
  GgmlOracle::Context* context_ = nullptr;
};

class VersusGgml : public BackendTest {};

TEST_P(VersusGgml, Dot) {
  const auto& ggml = GgmlFloatOps::load();
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const auto a = brick::test::normal(n, n);
    const auto b = brick::test::normal(n, n + 1);
    float expected = 0.0f;
    ggml.vec_dot_f32(static_cast<int>(n), &expected, 0, a.data(), 0, b.data(), 0, 1);
    const float actual = dot(a, b, backend());
    const AssertionOutcome outcome =
        test::compare(std::span(&actual, 1), std::span(&expected, 1), DotOp::equivalence());
    EXPECT_TRUE(outcome.passed) << "n = " << n << ": " << outcome.summary();
  }
}

TEST_P(VersusGgml, SiluAndSwiglu) {
  const auto& ggml = GgmlFloatOps::load();
  for (std::size_t n : brick::test::kAwkwardLengths) {
    const auto x = brick::test::uniform(n, n, -30.0f, 30.0f);
    const auto up = brick::test::normal(n, n + 1);
    std::vector<float> expected(n);
    std::vector<float> actual(n);
    ggml.vec_silu_f32(static_cast<int>(n), expected.data(), x.data());
    silu(x, actual, backend());
    AssertionOutcome outcome = test::compare(actual, expected, SiluOp::equivalence());
    EXPECT_TRUE(outcome.passed) << "silu n = " << n << ": " << outcome.summary();
    ggml.vec_swiglu_f32(static_cast<int>(n), expected.data(), x.data(), up.data());
    swiglu(x, up, actual, backend());
    outcome = test::compare(actual, expected, SwigluOp::equivalence());
    EXPECT_TRUE(outcome.passed) << "swiglu n = " << n << ": " << outcome.summary();
  }
}

TEST_P(VersusGgml, Softmax) {
  // ggml's soft_max op: max, then ggml_vec_soft_max_f32 (exp and double sum), then a scale by
  // (float)(1 / sum).
  const auto& ggml = GgmlFloatOps::load();
  for (std::size_t n : brick::test::kAwkwardLengths) {
    std::vector<float> x = brick::test::normal(n, n, 0.0f, 5.0f);
    for (std::size_t i = 1; i < n; i += 3) x[i] = -INFINITY;
    float max = -INFINITY;
    for (float v : x) max = std::max(max, v);
    std::vector<float> expected(n);
    const double sum = ggml.vec_soft_max_f32(static_cast<int>(n), expected.data(), x.data(), max);
    const auto scale = static_cast<float>(1.0 / sum);
    for (float& v : expected) v *= scale;
    std::vector<float> actual(n);
    softmax(x, actual, backend());
    const AssertionOutcome outcome = test::compare(actual, expected, SoftmaxOp::equivalence());
    EXPECT_TRUE(outcome.passed) << "n = " << n << ": " << outcome.summary();
  }
}

TEST_P(VersusGgml, RmsNormIsLlamaCppsNormThenMul) {
  const auto& ggml = GgmlFloatOps::load();
  for (std::size_t n : brick::test::kAwkwardLengths) {
    GgmlGraph graph(8 * n * sizeof(float));
    auto* x =
        graph.oracle().ggml_new_tensor_1d(graph.context(), kGgmlF32, static_cast<std::int64_t>(n));
    auto* w =
        graph.oracle().ggml_new_tensor_1d(graph.context(), kGgmlF32, static_cast<std::int64_t>(n));
    const auto x_values = brick::test::normal(n, n, 0.3f, 2.0f);
    const auto w_values = brick::test::uniform(n, n + 1, 0.5f, 1.5f);
    std::ranges::copy(x_values, graph.data<float>(x, n).begin());
    std::ranges::copy(w_values, graph.data<float>(w, n).begin());
    auto* result = ggml.mul(graph.context(), ggml.rms_norm(graph.context(), x, 1e-5f), w);
    graph.compute(result);
    const auto expected = graph.data<float>(result, n);
    std::vector<float> actual(n);
    rms_norm(x_values, w_values, 1e-5f, actual, backend());
    const AssertionOutcome outcome = test::compare(actual, expected, RmsNormOp::equivalence());
    EXPECT_TRUE(outcome.passed) << "n = " << n << ": " << outcome.summary();
    EXPECT_LE(outcome.max_ulp, 1u) << "n = " << n;
  }
}

TEST_P(VersusGgml, RopeBothLayouts) {
  const auto& ggml = GgmlFloatOps::load();
  for (RopeLayout layout : {RopeLayout::Normal, RopeLayout::NeoX}) {
    for (std::size_t head_dim : {64, 128, 80}) {
      for (std::size_t position : {0, 1, 37, 4095}) {
        for (float base : {10000.0f, 1000000.0f}) {
          const std::size_t n_heads = 5;
          const std::size_t n = n_heads * head_dim;
          GgmlGraph graph(4 * n * sizeof(float));
          auto* x =
              ggml.new_tensor_3d(graph.context(), kGgmlF32, static_cast<std::int64_t>(head_dim),
                                 static_cast<std::int64_t>(n_heads), 1);
          auto* pos = graph.oracle().ggml_new_tensor_1d(graph.context(), kGgmlI32, 1);
          const auto x_values = brick::test::normal(n, head_dim + position);
          std::ranges::copy(x_values, graph.data<float>(x, n).begin());
          graph.data<std::int32_t>(pos, 1)[0] = static_cast<std::int32_t>(position);
          const int mode = layout == RopeLayout::NeoX ? kGgmlRopeNeox : 0;
          auto* result = ggml.rope_ext(graph.context(), x, pos, nullptr, static_cast<int>(head_dim),
                                       mode, 0, base, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
          graph.compute(result);
          const auto expected = graph.data<float>(result, n);
          std::vector<float> actual(n);
          rope(x_values, RopeParams{head_dim, position, base, layout}, actual, backend());
          // ggml's own build may fuse a*cos - b*sin into an FMA: allow that one rounding of a
          // product (|x| <~ 5 here), and nothing more.
          const AssertionOutcome outcome = test::compare(actual, expected, 1e-6, 1e-6);
          EXPECT_TRUE(outcome.passed)
              << "layout " << static_cast<int>(layout) << " head_dim " << head_dim << " position "
              << position << " base " << base << ": " << outcome.summary();
        }
      }
    }
  }
}

TEST_P(VersusGgml, MatvecIsGgmlMulMat) {
  const GgmlOracle& oracle = GgmlOracle::load();
  for (std::size_t rows : {1, 7, 64, 129}) {
    for (std::size_t cols : {256, 512, 4096}) {
      brick::test::GgmlMatVec ggml(oracle, brick::test::GgmlType::F32, rows, cols);
      const auto w = brick::test::normal(rows * cols, rows + cols, 0.0f, 0.05f);
      const auto x = brick::test::normal(cols, cols);
      std::memcpy(ggml.weights().data(), w.data(), w.size() * sizeof(float));
      std::ranges::copy(x, ggml.input().begin());
      ggml.compute(1);
      std::vector<float> actual(rows);
      matvec(w, rows, cols, x, actual, backend());
      const AssertionOutcome outcome =
          test::compare(actual, ggml.output(), MatvecOp::equivalence());
      EXPECT_TRUE(outcome.passed) << rows << " x " << cols << ": " << outcome.summary();
    }
  }
}

BRICK_OPS_INSTANTIATE(VersusGgml, test::kAllBackends);

}  // namespace
}  // namespace brick::ops
