// The float ops on every backend this CPU runs, side by side in one process, at the sizes of a
// 7B-class decoder layer (hidden 4096, feed-forward 11008, 32 heads of 128), next to ggml's own
// exported kernels (the oracle: ggml_vec_dot_f32, ggml_vec_silu_f32, ggml_vec_swiglu_f32,
// ggml_vec_soft_max_f32, and an f32 ggml_mul_mat on a one-thread pool) and a plain memory-read
// baseline over the same bytes as the largest matvec, so its time can be read as a fraction of
// bandwidth.
//
// From build/release:
//   bin/brick_ops_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
//
// Everything here is single-threaded but attention (model::AttentionOp, one decode step), which
// runs on a pool of 1 and of 2 threads. bytes_per_second counts bytes read plus written (OpCost).
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/model/attention.hpp"
#include "brick/ops/activation.hpp"
#include "brick/ops/dot.hpp"
#include "brick/ops/elementwise.hpp"
#include "brick/ops/matvec.hpp"
#include "brick/ops/rms_norm.hpp"
#include "brick/ops/rope.hpp"
#include "brick/ops/softmax.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace {

using brick::Backend;
namespace ops = brick::ops;
namespace model = brick::model;
using brick::KvCache;
using brick::KvType;
using brick::Placement;
using brick::Pos;
using brick::ThreadPool;

constexpr std::size_t kHidden = 4096;
constexpr std::size_t kFeedForward = 11008;
constexpr std::size_t kHeadDim = 128;

std::vector<float> data(std::size_t n, std::uint64_t seed) {
  return brick::test::normal(n, seed);
}

// Runs `body` per iteration and reports `bytes` and `items` per iteration.
void measure(benchmark::State& state, double bytes, double items,
             const std::function<void()>& body) {
  for (auto _ : state) {
    body();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(bytes * static_cast<double>(state.iterations())));
  state.SetItemsProcessed(
      static_cast<std::int64_t>(items * static_cast<double>(state.iterations())));
}

// ggml's exported per-row kernels, resolved from the oracle's CPU library; null when the oracle
// is not installed (its rows are then left out).
struct Ggml {
  using DotF32 = void (*)(int, float*, std::size_t, const float*, std::size_t, const float*,
                          std::size_t, int);
  using SiluF32 = void (*)(int, float*, const float*);
  using SwigluF32 = void (*)(int, float*, const float*, const float*);
  using SoftMaxF32 = double (*)(int, float*, const float*, float);
  const brick::test::GgmlOracle* oracle = nullptr;
  std::string label;  // "ggml-zen4"
  DotF32 dot = nullptr;
  SiluF32 silu = nullptr;
  SwigluF32 swiglu = nullptr;
  SoftMaxF32 soft_max = nullptr;
};

template <class Fn>
Fn symbol(void* handle, const char* name) {
  return handle != nullptr ? reinterpret_cast<Fn>(dlsym(handle, name)) : nullptr;
}

Ggml load_ggml() {
  Ggml g;
  try {
    g.oracle = &brick::test::GgmlOracle::load();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "ggml oracle not available, its rows are left out: %s\n", error.what());
    return g;
  }
  void* cpu = dlopen(g.oracle->cpu_library_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  g.label = "ggml-" + g.oracle->cpu_variant();
  g.dot = symbol<Ggml::DotF32>(cpu, "ggml_vec_dot_f32");
  g.silu = symbol<Ggml::SiluF32>(cpu, "ggml_vec_silu_f32");
  g.swiglu = symbol<Ggml::SwigluF32>(cpu, "ggml_vec_swiglu_f32");
  g.soft_max = symbol<Ggml::SoftMaxF32>(cpu, "ggml_vec_soft_max_f32");
  return g;
}

void register_one(const std::string& name, const std::function<void(benchmark::State&)>& bench) {
  benchmark::RegisterBenchmark(name.c_str(), [bench](benchmark::State& state) { bench(state); });
}

void register_backends(const std::string& op, std::size_t size_label,
                       const std::function<void(benchmark::State&, Backend)>& bench) {
  for (Backend backend : brick::kConcreteBackends) {
    if (!brick::is_supported(backend)) continue;
    const std::string name =
        op + "/" + std::to_string(size_label) + "/" + std::string(brick::name(backend));
    benchmark::RegisterBenchmark(
        name.c_str(), [bench, backend](benchmark::State& state) { bench(state, backend); });
  }
}

void register_float_ops(const Ggml& ggml) {
  register_backends("dot", kHidden, [](benchmark::State& state, Backend backend) {
    const auto a = data(kHidden, 1);
    const auto b = data(kHidden, 2);
    const ops::DotOp op;
    measure(state, op.cost({a, b}).bytes, kHidden,
            [&] { benchmark::DoNotOptimize(ops::dot(a, b, backend)); });
  });
  if (ggml.dot != nullptr) {
    register_one("dot/4096/" + ggml.label, [dot = ggml.dot](benchmark::State& state) {
      const auto a = data(kHidden, 1);
      const auto b = data(kHidden, 2);
      float s = 0.0f;
      measure(state, 8.0 * kHidden + 4, kHidden, [&] {
        dot(static_cast<int>(kHidden), &s, 0, a.data(), 0, b.data(), 0, 1);
        benchmark::DoNotOptimize(s);
      });
    });
  }
  register_backends("add", kHidden, [](benchmark::State& state, Backend backend) {
    const auto a = data(kHidden, 1);
    const auto b = data(kHidden, 2);
    std::vector<float> out(kHidden);
    measure(state, ops::AddOp{}.cost({a, b}).bytes, kHidden, [&] { ops::add(a, b, out, backend); });
  });
  register_backends("axpy", kHidden, [](benchmark::State& state, Backend backend) {
    const auto x = data(kHidden, 1);
    std::vector<float> y(kHidden, 0.0f);
    measure(state, 12.0 * kHidden, kHidden, [&] { ops::axpy(1e-3f, x, y, backend); });
  });
  register_backends("rms_norm", kHidden, [](benchmark::State& state, Backend backend) {
    const auto x = data(kHidden, 1);
    const auto weight = data(kHidden, 2);
    std::vector<float> out(kHidden);
    measure(state, ops::RmsNormOp{}.cost({x, weight, 1e-6f}).bytes, kHidden,
            [&] { ops::rms_norm(x, weight, 1e-6f, out, backend); });
  });
  register_backends("softmax", kHidden, [](benchmark::State& state, Backend backend) {
    const auto x = data(kHidden, 1);
    std::vector<float> out(kHidden);
    measure(state, ops::SoftmaxOp{}.cost({x}).bytes, kHidden,
            [&] { ops::softmax(x, out, backend); });
  });
  if (ggml.soft_max != nullptr) {
    // A softmax row as ggml's soft_max op computes it: ggml_vec_soft_max_f32 (exp and double sum)
    // is ggml's; its max and scale loops are inline in ggml, so plain loops here stand in for them
    // (ggml's max loop is scalar as well; the scale loop vectorises).
    register_one(
        "softmax/4096/" + ggml.label + "-row", [soft_max = ggml.soft_max](benchmark::State& state) {
          const auto x = data(kHidden, 1);
          std::vector<float> out(kHidden);
          measure(state, 8.0 * kHidden, kHidden, [&] {
            float max = -INFINITY;
            for (float v : x) max = std::max(max, v);
            const double sum = soft_max(static_cast<int>(kHidden), out.data(), x.data(), max);
            const auto scale = static_cast<float>(1.0 / sum);
            for (float& v : out) v *= scale;
          });
        });
  }
  register_backends("silu", kFeedForward, [](benchmark::State& state, Backend backend) {
    const auto x = data(kFeedForward, 1);
    std::vector<float> out(kFeedForward);
    measure(state, ops::SiluOp{}.cost({x}).bytes, kFeedForward,
            [&] { ops::silu(x, out, backend); });
  });
  if (ggml.silu != nullptr) {
    register_one("silu/11008/" + ggml.label, [silu = ggml.silu](benchmark::State& state) {
      const auto x = data(kFeedForward, 1);
      std::vector<float> out(kFeedForward);
      measure(state, 8.0 * kFeedForward, kFeedForward,
              [&] { silu(static_cast<int>(kFeedForward), out.data(), x.data()); });
    });
  }
  register_backends("swiglu", kFeedForward, [](benchmark::State& state, Backend backend) {
    const auto gate = data(kFeedForward, 1);
    const auto up = data(kFeedForward, 2);
    std::vector<float> out(kFeedForward);
    measure(state, ops::SwigluOp{}.cost({gate, up}).bytes, kFeedForward,
            [&] { ops::swiglu(gate, up, out, backend); });
  });
  if (ggml.swiglu != nullptr) {
    register_one("swiglu/11008/" + ggml.label, [swiglu = ggml.swiglu](benchmark::State& state) {
      const auto gate = data(kFeedForward, 1);
      const auto up = data(kFeedForward, 2);
      std::vector<float> out(kFeedForward);
      measure(state, 12.0 * kFeedForward, kFeedForward,
              [&] { swiglu(static_cast<int>(kFeedForward), out.data(), gate.data(), up.data()); });
    });
  }
  for (const auto layout : {ops::RopeLayout::Normal, ops::RopeLayout::NeoX}) {
    const std::string op = layout == ops::RopeLayout::Normal ? "rope_norm" : "rope_neox";
    register_backends(op, kHidden, [layout](benchmark::State& state, Backend backend) {
      const auto x = data(kHidden, 1);
      std::vector<float> out(kHidden);
      const ops::RopeParams params{kHeadDim, 1234, 10000.0f, layout};
      measure(state, ops::RopeOp{}.cost({x, params}).bytes, kHidden,
              [&] { ops::rope(x, params, out, backend); });
    });
  }
  for (const std::size_t n : {std::size_t{2048}, std::size_t{4096}}) {
    register_backends("matvec", n, [n](benchmark::State& state, Backend backend) {
      const auto w = data(n * n, 1);
      const auto x = data(n, 2);
      std::vector<float> y(n);
      const ops::MatvecOp op{brick::BrickId::DownProjection};
      measure(state, op.cost({w, n, n, x}).bytes, static_cast<double>(n * n),
              [&] { ops::matvec(w, n, n, x, y, backend); });
    });
    if (ggml.oracle != nullptr) {
      register_one("matvec/" + std::to_string(n) + "/" + ggml.label + "-mul_mat",
                   [oracle = ggml.oracle, n](benchmark::State& state) {
                     brick::test::GgmlMatVec mv(*oracle, brick::test::GgmlType::F32, n, n);
                     const auto w = data(n * n, 1);
                     std::memcpy(mv.weights().data(), w.data(), w.size() * sizeof(float));
                     const auto x = data(n, 2);
                     std::copy(x.begin(), x.end(), mv.input().begin());
                     measure(state, 4.0 * static_cast<double>(n * n + 2 * n),
                             static_cast<double>(n * n), [&] { mv.compute_pooled(1); });
                   });
    }
  }
}

// One token's attention (model::AttentionOp) against an F16 cache of `cells` cells, in the shape of
// the 1.1B synthetic model brick_llama_cpp_bench runs (32 query heads over 4 kv heads of 64) and
// of a 7B-class one with GQA (32 over 8 of 128): what a decode step spends per layer. The cache
// holds 22 layers and the token reads one in the middle, so its keys and values come from beyond
// L2 as in a decode. Threads 1 and 2 (the pool's); bytes are the op's cost (its KV read).
struct AttentionBenchShape {
  const char* name;
  std::size_t heads, kv_heads, head_dim;
};

void attention_step(benchmark::State& state, Backend backend, AttentionBenchShape shape, std::size_t cells,
                    std::size_t threads) {
  constexpr std::size_t kLayers = 22;
  KvCache cache({kLayers, cells, shape.kv_heads, shape.head_dim, KvType::F16});
  std::vector<Pos> positions(cells);
  for (std::size_t i = 0; i < cells; ++i) positions[i] = static_cast<Pos>(i);
  if (!cache.find_slot(0, positions, Placement::Contiguous)) {
    state.SkipWithError("no slot");
    return;
  }
  const std::size_t width = shape.kv_heads * shape.head_dim;
  const auto k = data(cells * width, 3);
  const auto v = data(cells * width, 4);
  std::vector<float> stored(2 * cells * width);
  model::KvWriteOp write(cache);
  for (std::size_t layer = 0; layer < kLayers; ++layer) write.run({k, v, layer, 0, cells}, stored, backend);
  ThreadPool pool(threads);
  const model::AttentionOp op(cache, {shape.heads, shape.kv_heads, shape.head_dim}, pool);
  const auto q = data(shape.heads * shape.head_dim, 5);
  const model::AttentionOp::Input input{q, kLayers / 2, cells, 1};
  std::vector<float> out(op.output_size(input));
  measure(state, op.cost(input).bytes, static_cast<double>(cells), [&] { op.run(input, out, backend); });
}

void register_attention() {
  for (const AttentionBenchShape shape :
       {AttentionBenchShape{"32x4x64", 32, 4, 64}, AttentionBenchShape{"32x8x128", 32, 8, 128}}) {
    for (const std::size_t cells : {512, 2048}) {
      for (const std::size_t threads : {1, 2}) {
        register_backends(
            "attention_" + std::to_string(threads) + "t/" + shape.name, cells,
            [=](benchmark::State& state, Backend backend) { attention_step(state, backend, shape, cells, threads); });
      }
    }
  }
}

// Reading the 4096 x 4096 matvec's 64 MiB once: glibc's memchr for a byte that is not there
// streams the buffer with its widest loads, a practical single-core read-bandwidth ceiling.
void register_read_bandwidth() {
  benchmark::RegisterBenchmark("read_bandwidth/memchr/4096", [](benchmark::State& state) {
    std::vector<unsigned char> buffer(kHidden * kHidden * sizeof(float), 1);
    measure(state, static_cast<double>(buffer.size()), static_cast<double>(buffer.size()),
            [&] { benchmark::DoNotOptimize(std::memchr(buffer.data(), 0, buffer.size())); });
  });
}

}  // namespace

int main(int argc, char** argv) {
  register_float_ops(load_ggml());
  register_attention();
  register_read_bandwidth();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
