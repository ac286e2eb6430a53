// The weight-type kernels side by side with ggml (the oracle libraries), same data, same run, for
// every format of the kernel table (Q4_K, Q5_K, Q6_K, Q8_0, F16, BF16):
//   hot_dot   one 4096-value row in cache, ns per 256 values: every Brick kernel the CPU runs (the
//             scalar references aside; brick_<isa>_interleaved and _grouped on the weights
//             repacked, weight_layout.hpp) vs ggml_vec_dot_*
//   l2_rows   rows of 4096 values in L2 (128 rows, or 512 KiB), ns per 256 values: the multi-row
//             kernels (what a mat-vec runs) vs ggml_vec_dot_* row after row, the compute rate
//             without DRAM
//   bandwidth read-only pass over 256 MiB or twice the L3 at 1 and 2 threads as 2, 4 and 8 interleaved streams,
//             with and without software prefetch (read_probe.hpp); the best of the six is the
//             ceiling for a batch-1 mat-vec
//   matvec    14336x4096 of each type, DRAM-resident (copies in rotation), 1 and 2 threads, vs
//             ggml_mul_mat computed as ggml_graph_compute_with_ctx does (threads created per call),
//             and on a persistent ggml pool; the k-quants also with each row walk pinned
//             (_four_runs, _one_after_another; quant/row_walk.hpp), where the plain name runs this
//             CPU's walk
//   fused     QKV (4096, 32 heads, 8 KV heads; Q5_K_M's and Q4_K_M's types) and gate-up (4096 ->
//             14336) vs one ggml graph of the separate mat-vecs on a persistent ggml pool, also with
//             each row walk pinned
//   pool      per-call cost of the thread pool: an empty call and a 256x256 mat-vec at 2 threads, the
//             mat-vec also while a third thread keeps a CPU busy (wall clock: a stall would show)
//   convert   a 4096-value x into each activation format (what every mat-vec does first): each
//             backend vs ggml-cpu's from_float (quantize_row_q8_K, quantize_row_q8_0,
//             ggml_cpu_fp32_to_fp16, ggml_cpu_fp32_to_bf16)
// Repetitions are interleaved at random (ours and ggml's alternate); the table at the end quotes
// medians and their ratios. Run: build/release/bin/brick_kquant_bench
// --brick_huge_pages puts the weights (ggml's tensors, which both libraries read) and the probe's
// buffer in memory advised MADV_HUGEPAGE; by default they have ordinary pages, as a model mapped
// from its file has.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "benchmark_defaults.hpp"
#include "brick/quant/fused_ops.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/memory/aligned_buffer.hpp"
#include "quant/dot_formats_testing.hpp"
#include "quant/dot_kernel_table.hpp"
#include "quant/kquant_blocks.hpp"
#include "quant/row_walk.hpp"
#include "read_probe.hpp"
#include "support/ggml_oracle.hpp"
#include "support/random_data.hpp"

namespace {

using namespace brick;
using namespace brick::quant;
using test::GgmlOracle;
using test::GgmlType;

const GgmlOracle& oracle() { return GgmlOracle::load(); }

bool g_huge_pages = false;  // --brick_huge_pages

// Memory for a large benchmark buffer: a huge-page mapping under --brick_huge_pages, else an
// ordinary anonymous mapping (what malloc gives for blocks this large). Pages are backed when
// first written.
AlignedBuffer large_buffer(std::size_t bytes) {
  return g_huge_pages ? AlignedBuffer::huge_page_aligned(bytes) : AlignedBuffer::page_aligned(bytes);
}

// The process's anonymous memory backed by transparent huge pages, in MiB (AnonHugePages in
// /proc/self/smaps_rollup; -1 where the kernel does not report it).
long anon_huge_pages_mib() {
  std::FILE* f = std::fopen("/proc/self/smaps_rollup", "r");
  if (f == nullptr) return -1;
  long kib = -1;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib < 0 ? -1 : kib / 1024;
}

ThreadPool& pool(int threads) {
  static ThreadPool one(1);
  static ThreadPool two(2);
  return threads == 1 ? one : two;
}

// ---------------------------------------------------------------------------------------------
// ggml graphs with several nodes, computed on one persistent ggml pool per thread count (what
// llama.cpp does), or the way ggml_graph_compute_with_ctx computes (threads created per call).

struct GgmlExtra {  // entry points the oracle does not wrap
  using Unary = GgmlOracle::Tensor* (*)(GgmlOracle::Context*, GgmlOracle::Tensor*);
  using Binary = GgmlOracle::Tensor* (*)(GgmlOracle::Context*, GgmlOracle::Tensor*, GgmlOracle::Tensor*);
  Unary silu = nullptr;
  Binary mul = nullptr;
  static const GgmlExtra& get() {
    static const GgmlExtra extra = [] {
      void* base = dlopen(oracle().base_library_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
      GgmlExtra e;
      e.silu = reinterpret_cast<Unary>(dlsym(base, "ggml_silu"));
      e.mul = reinterpret_cast<Binary>(dlsym(base, "ggml_mul"));
      if (e.silu == nullptr || e.mul == nullptr) throw std::runtime_error("ggml_silu/ggml_mul not found");
      return e;
    }();
    return extra;
  }
};

GgmlOracle::ThreadPool* ggml_pool(int threads) {
  static std::map<int, GgmlOracle::ThreadPool*> pools;
  auto& slot = pools[threads];
  if (slot == nullptr) {
    alignas(64) unsigned char params[2048] = {};
    oracle().ggml_threadpool_params_init(params, threads);
    slot = oracle().ggml_threadpool_new(params);
  }
  return slot;
}

class GgmlGraph {
 public:
  // `bytes` for the tensors' data; the graph, tensor headers and compute work buffer come on top.
  explicit GgmlGraph(std::size_t bytes)
      : memory_(large_buffer(bytes + oracle().ggml_graph_overhead() + 64 * oracle().ggml_tensor_overhead() +
                             (64u << 20))),
        context_(oracle().ggml_init({memory_.size(), memory_.data(), false})) {
    graph_ = oracle().ggml_new_graph(context_);
  }
  ~GgmlGraph() { oracle().ggml_free(context_); }
  GgmlGraph(const GgmlGraph&) = delete;
  GgmlGraph& operator=(const GgmlGraph&) = delete;

  GgmlOracle::Tensor* matrix(GgmlType type, std::size_t rows, std::size_t cols) {
    return oracle().ggml_new_tensor_2d(context_, static_cast<int>(type), static_cast<std::int64_t>(cols),
                                       static_cast<std::int64_t>(rows));
  }
  GgmlOracle::Tensor* vector(std::size_t n) {
    return oracle().ggml_new_tensor_1d(context_, static_cast<int>(GgmlType::F32), static_cast<std::int64_t>(n));
  }
  GgmlOracle::Context* context() const { return context_; }
  void output(GgmlOracle::Tensor* t) { oracle().ggml_build_forward_expand(graph_, t); }

  // What ggml_graph_compute_with_ctx does (a plan without a pool: ggml creates and joins its
  // threads in this call), except that with_ctx carves a new work buffer out of the context on
  // every call and would exhaust it over a benchmark's iterations.
  void compute_with_ctx(int threads) {
    GgmlOracle::ComputePlan plan = oracle().ggml_graph_plan(graph_, threads, nullptr);
    if (work_.size() < plan.work_size) work_.resize(plan.work_size);
    plan.work_data = work_.data();
    oracle().ggml_graph_compute(graph_, &plan);
  }
  void compute_pooled(int threads) {
    GgmlOracle::ComputePlan plan = oracle().ggml_graph_plan(graph_, threads, ggml_pool(threads));
    if (work_.size() < plan.work_size) work_.resize(plan.work_size);
    plan.work_data = work_.data();
    oracle().ggml_graph_compute(graph_, &plan);
  }

 private:
  AlignedBuffer memory_;  // the context's memory: tensors, graph, headers
  GgmlOracle::Context* context_;
  GgmlOracle::Graph* graph_ = nullptr;
  std::vector<std::uint8_t> work_;
};

// What the benchmark needs of each weight format beyond the kernel table: its name in the tables,
// ggml's type and its dot product.
template <class Format>
struct BenchFormat;

// `Repacked` is the format of the same weights repacked as the AVX2 kernels prefer
// (weight_layout.hpp), void where the type has no such layout.
template <GgmlType kType, GgmlOracle::VecDotFn GgmlOracle::*kVecDot, class RepackedFormat = void>
struct BenchFormatOf {
  static constexpr GgmlType kGgmlType = kType;
  using Repacked = RepackedFormat;
  static GgmlOracle::VecDotFn vec_dot() { return oracle().*kVecDot; }
};

template <>
struct BenchFormat<quant::detail::Q4KFormat>
    : BenchFormatOf<GgmlType::Q4_K, &GgmlOracle::ggml_vec_dot_q4_K_q8_K, quant::detail::Q4KInterleavedFormat> {
  static constexpr const char* kName = "q4k";
};
template <>
struct BenchFormat<quant::detail::Q5KFormat>
    : BenchFormatOf<GgmlType::Q5_K, &GgmlOracle::ggml_vec_dot_q5_K_q8_K, quant::detail::Q5KInterleavedFormat> {
  static constexpr const char* kName = "q5k";
};
template <>
struct BenchFormat<quant::detail::Q6KFormat>
    : BenchFormatOf<GgmlType::Q6_K, &GgmlOracle::ggml_vec_dot_q6_K_q8_K, quant::detail::Q6KInterleavedFormat> {
  static constexpr const char* kName = "q6k";
};
template <>
struct BenchFormat<quant::detail::Q80Format>
    : BenchFormatOf<GgmlType::Q8_0, &GgmlOracle::ggml_vec_dot_q8_0_q8_0, quant::detail::Q80GroupedFormat> {
  static constexpr const char* kName = "q8_0";
};
template <>
struct BenchFormat<quant::detail::F16Format> : BenchFormatOf<GgmlType::F16, &GgmlOracle::ggml_vec_dot_f16> {
  static constexpr const char* kName = "f16";
};
template <>
struct BenchFormat<quant::detail::BF16Format> : BenchFormatOf<GgmlType::BF16, &GgmlOracle::ggml_vec_dot_bf16> {
  static constexpr const char* kName = "bf16";
};

using BenchFormats = std::tuple<quant::detail::Q4KFormat, quant::detail::Q5KFormat, quant::detail::Q6KFormat, quant::detail::Q80Format,
                                quant::detail::F16Format, quant::detail::BF16Format>;

template <class Visit>
void for_each_format(Visit&& visit) {
  std::apply([&](auto... formats) { (visit(formats), ...); }, BenchFormats{});
}

// `blocks` blocks of what a model holds: normally distributed weights converted as llama-quantize
// does (the k-quants drawn from a pool of such blocks, which is faster for large matrices).
template <class Format>
std::vector<typename Format::Weight> realistic_weights(std::size_t blocks, std::uint64_t seed) {
  if constexpr (Format::kValues == kBlockSize) {
    return test::realistic_blocks<typename Format::Weight>(blocks, seed);
  } else {
    return test::FormatTesting<Format>::weights_from(test::normal(blocks * Format::kValues, seed, 0.0f, 0.02f));
  }
}

// A weight matrix living in a ggml tensor; Brick reads the same bytes.
template <class Format>
struct SharedMatrix {
  GgmlOracle::Tensor* tensor = nullptr;
  WeightMatrix view;

  SharedMatrix(GgmlGraph& graph, std::size_t rows, std::size_t cols, std::uint64_t seed)
      : tensor(graph.matrix(BenchFormat<Format>::kGgmlType, rows, cols)) {
    const auto blocks = realistic_weights<Format>(rows * cols / Format::kValues, seed);
    const std::size_t bytes = blocks.size() * sizeof(blocks[0]);
    auto* data = static_cast<std::byte*>(oracle().ggml_get_data(tensor));
    std::memcpy(data, blocks.data(), bytes);
    view = WeightMatrix(Format::kType, std::span<const std::byte>(data, bytes), rows, cols);
  }
};

void fill_input(GgmlOracle::Tensor* t, const std::vector<float>& x) {
  std::memcpy(oracle().ggml_get_data(t), x.data(), x.size() * sizeof(float));
}

// Bytes one iteration reads, for GB/s against the measured read bandwidth.
void report_bytes(benchmark::State& state, double bytes_per_iteration) {
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * bytes_per_iteration));
  state.counters["bytes"] = bytes_per_iteration;
}

// ---------------------------------------------------------------------------------------------
// hot dot

template <class Format>
struct HotRow {
  static constexpr std::size_t kBlocks = 4096 / Format::kValues;
  std::vector<typename Format::Weight> w = realistic_weights<Format>(kBlocks, 7);
  std::vector<typename Format::Activation> x = test::FormatTesting<Format>::activations_from(test::normal(4096, 8));
  static const HotRow& get() {
    static const HotRow row;
    return row;
  }
};

// The benchmark names' word for a repacked layout.
constexpr std::string_view layout_suffix(WeightLayout layout) {
  return layout == WeightLayout::GroupedBlocks ? "_grouped" : "_interleaved";
}

// The row walks a benchmark can pin (quant/row_walk.hpp), with the suffix of their names; a name
// without one runs this CPU's walk.
using quant::detail::RowWalk;
constexpr std::pair<RowWalk, std::string_view> kPinnedWalks[] = {{RowWalk::FourRuns, "_four_runs"},
                                                                 {RowWalk::OneAfterAnother, "_one_after_another"}};
// Whether a format's rows kernels follow the row walk: the k-quants' (plain and interleaved).
template <class Format>
constexpr bool kFollowsRowWalk = Format::kValues == kBlockSize;

// Holds `walk` for this process while it lives, when there is one.
class OptionalWalkPin {
 public:
  explicit OptionalWalkPin(std::optional<RowWalk> walk) {
    if (walk) pin_.emplace(*walk);
  }

 private:
  std::optional<quant::detail::RowWalkPin> pin_;
};

// Weight blocks of `Plain`, repacked into the format `Repacked`.
template <class Plain, class Repacked>
std::vector<typename Repacked::Weight> repacked_weights(const std::vector<typename Plain::Weight>& w) {
  const WeightMatrix plain(Plain::kType, std::as_bytes(std::span(w)), 1, w.size() * Plain::kValues);
  const RepackedMatrix repacked(plain, Repacked::kLayout);
  std::vector<typename Repacked::Weight> out(repacked.matrix().data().size() / sizeof(typename Repacked::Weight));
  std::memcpy(out.data(), repacked.matrix().data().data(), repacked.matrix().data().size());
  return out;
}

// The hot row of `Plain`, repacked, and its activations permuted or grouped to match.
template <class Plain, class Repacked>
struct RepackedHotRow {
  static constexpr std::size_t kBlocks = 4096 / Repacked::kValues;
  std::vector<typename Repacked::Weight> w = repacked_weights<Plain, Repacked>(HotRow<Plain>::get().w);
  std::vector<typename Repacked::Activation> x = [] {
    const auto& plain = HotRow<Plain>::get().x;
    std::vector<typename Repacked::Activation> out(kBlocks);
    if constexpr (Repacked::kLayout == WeightLayout::GroupedBlocks) {
      group_q8_0(plain, out);
    } else {
      interleave_q8k(plain, out);
    }
    return out;
  }();
  static const RepackedHotRow& get() {
    static const RepackedHotRow row;
    return row;
  }
};

template <class Format>
void hot_dot_brick(benchmark::State& state, const quant::detail::DotKernel<Format>& kernel) {
  const HotRow<Format>& row = HotRow<Format>::get();
  for (auto _ : state) {
    float s = kernel.row(row.w.data(), row.x.data(), HotRow<Format>::kBlocks);
    benchmark::DoNotOptimize(s);
  }
}

template <class Plain, class Repacked>
void hot_dot_repacked(benchmark::State& state, const quant::detail::DotKernel<Repacked>& kernel) {
  const auto& row = RepackedHotRow<Plain, Repacked>::get();
  for (auto _ : state) {
    float s = kernel.row(row.w.data(), row.x.data(), row.kBlocks);
    benchmark::DoNotOptimize(s);
  }
}

template <class Format>
void hot_dot_ggml(benchmark::State& state) {
  const HotRow<Format>& row = HotRow<Format>::get();
  const auto vec_dot = BenchFormat<Format>::vec_dot();
  for (auto _ : state) {
    float s = 0;
    vec_dot(4096, &s, 0, row.w.data(), 0, row.x.data(), 0, 1);
    benchmark::DoNotOptimize(s);
  }
}

// ---------------------------------------------------------------------------------------------
// rows in L2

// 128 rows of 4096 values, fewer for the 16-bit formats: at most 512 KiB, half this CPU's L2.
template <class Format>
constexpr std::size_t l2_rows() {
  return std::min<std::size_t>(128, (512u << 10) / (HotRow<Format>::kBlocks * sizeof(typename Format::Weight)));
}

template <class Format>
struct L2Matrix {
  std::vector<typename Format::Weight> w = realistic_weights<Format>(l2_rows<Format>() * HotRow<Format>::kBlocks, 9);
  std::vector<float> out = std::vector<float>(l2_rows<Format>());
  static L2Matrix& get() {
    static L2Matrix matrix;
    return matrix;
  }
};

template <class Format>
void l2_rows_brick(benchmark::State& state, const quant::detail::DotKernel<Format>& kernel) {
  L2Matrix<Format>& m = L2Matrix<Format>::get();
  const HotRow<Format>& row = HotRow<Format>::get();
  for (auto _ : state) {
    kernel.rows(m.w.data(), l2_rows<Format>(), row.x.data(), HotRow<Format>::kBlocks, m.out.data());
    benchmark::ClobberMemory();
  }
}

template <class Plain, class Repacked>
void l2_rows_repacked(benchmark::State& state, const quant::detail::DotKernel<Repacked>& kernel) {
  static const std::vector<typename Repacked::Weight> w = repacked_weights<Plain, Repacked>(L2Matrix<Plain>::get().w);
  L2Matrix<Plain>& m = L2Matrix<Plain>::get();
  const auto& row = RepackedHotRow<Plain, Repacked>::get();
  for (auto _ : state) {
    kernel.rows(w.data(), l2_rows<Plain>(), row.x.data(), row.kBlocks, m.out.data());
    benchmark::ClobberMemory();
  }
}

template <class Format>
void l2_rows_ggml(benchmark::State& state) {
  L2Matrix<Format>& m = L2Matrix<Format>::get();
  const HotRow<Format>& row = HotRow<Format>::get();
  const auto vec_dot = BenchFormat<Format>::vec_dot();
  constexpr std::size_t kBlocks = HotRow<Format>::kBlocks;
  for (auto _ : state) {
    for (std::size_t r = 0; r < l2_rows<Format>(); ++r) vec_dot(4096, &m.out[r], 0, m.w.data() + kBlocks * r, 0, row.x.data(), 0, 1);
    benchmark::ClobberMemory();
  }
}

// ---------------------------------------------------------------------------------------------
// read bandwidth

const bench::ReadProbe& read_probe() {
  static const bench::ReadProbe probe{large_buffer(bench::ReadProbe::bytes())};
  return probe;
}

template <std::size_t kStreams, bool kPrefetch>
void bandwidth(benchmark::State& state) {
  const bench::ReadProbe& probe = read_probe();
  std::int64_t sum = 0;
  for (auto _ : state) {
    sum += probe.pass<kStreams, kPrefetch>(pool(static_cast<int>(state.range(0))));
    benchmark::DoNotOptimize(sum);
  }
  report_bytes(state, bench::ReadProbe::bytes());
}

// ---------------------------------------------------------------------------------------------
// matvec, DRAM-resident: copies of the matrix used in turn, at least three and together twice the
// L3 (read_probe.hpp; on a 32 MB L3, three of 33-117 MB).

constexpr std::size_t kFfn = 14336;
constexpr std::size_t kHidden = 4096;

template <class Format>
std::size_t matrix_bytes() {
  return *row_bytes(Format::kType, kHidden) * kFfn;
}

template <class Format>
struct MatvecSetup {
  std::size_t count = bench::dram_copies(matrix_bytes<Format>(), 3);
  GgmlGraph graph{count * (matrix_bytes<Format>() + 4 * (kFfn + kHidden)) + (16u << 20)};
  GgmlOracle::Tensor* input = graph.vector(kHidden);
  std::vector<SharedMatrix<Format>> copies;
  std::vector<float> x = test::normal(kHidden, 21);
  std::vector<float> y = std::vector<float>(kFfn);

  MatvecSetup() {
    for (std::size_t c = 0; c < count; ++c) {
      copies.emplace_back(graph, kFfn, kHidden, 100 + c);
      graph.output(oracle().ggml_mul_mat(graph.context(), copies.back().tensor, input));
    }
    fill_input(input, x);
  }
  static MatvecSetup& get() {
    static MatvecSetup setup;
    return setup;
  }
};

// ggml's graph holds all copies; one compute runs them all, so each copy gets its own graph here.
template <class Format>
struct GgmlMatvecCopies {
  std::vector<std::unique_ptr<GgmlGraph>> graphs;
  GgmlMatvecCopies() {
    MatvecSetup<Format>& setup = MatvecSetup<Format>::get();
    for (std::size_t c = 0; c < setup.count; ++c) {
      auto graph = std::make_unique<GgmlGraph>(std::size_t{1} << 20);
      graph->output(oracle().ggml_mul_mat(graph->context(), setup.copies[c].tensor, setup.input));
      graphs.push_back(std::move(graph));
    }
  }
  static GgmlMatvecCopies& get() {
    static GgmlMatvecCopies copies;
    return copies;
  }
};

template <class Format>
void matvec_brick(benchmark::State& state, std::optional<RowWalk> walk) {
  const OptionalWalkPin pin(walk);
  const int threads = static_cast<int>(state.range(0));
  MatvecSetup<Format>& setup = MatvecSetup<Format>::get();
  std::size_t turn = 0;
  for (auto _ : state) {
    matvec(setup.copies[turn++ % setup.count].view, std::span<const float>(setup.x), std::span(setup.y), pool(threads));
    benchmark::ClobberMemory();
  }
  report_bytes(state, bytes(setup.copies[0].view));
}

// The copies of the mat-vec's matrix repacked as the AVX2 kernels prefer.
template <class Format>
struct RepackedCopies {
  std::vector<RepackedMatrix> copies;
  RepackedCopies() {
    for (const SharedMatrix<Format>& copy : MatvecSetup<Format>::get().copies) {
      copies.emplace_back(copy.view, BenchFormat<Format>::Repacked::kLayout);
    }
  }
  static RepackedCopies& get() {
    static RepackedCopies repacked;
    return repacked;
  }
};

template <class Format>
void matvec_repacked(benchmark::State& state, std::optional<RowWalk> walk) {
  const OptionalWalkPin pin(walk);
  const int threads = static_cast<int>(state.range(0));
  MatvecSetup<Format>& setup = MatvecSetup<Format>::get();
  const RepackedCopies<Format>& repacked = RepackedCopies<Format>::get();
  std::size_t turn = 0;
  for (auto _ : state) {
    matvec(repacked.copies[turn++ % setup.count].matrix(), std::span<const float>(setup.x), std::span(setup.y),
           pool(threads));
    benchmark::ClobberMemory();
  }
  report_bytes(state, bytes(repacked.copies[0].matrix()));
}

template <class Format>
void matvec_ggml(benchmark::State& state, bool pooled) {
  const int threads = static_cast<int>(state.range(0));
  MatvecSetup<Format>& setup = MatvecSetup<Format>::get();
  GgmlMatvecCopies<Format>& ggml = GgmlMatvecCopies<Format>::get();
  std::size_t turn = 0;
  for (auto _ : state) {
    GgmlGraph& graph = *ggml.graphs[turn++ % setup.count];
    pooled ? graph.compute_pooled(threads) : graph.compute_with_ctx(threads);
  }
  report_bytes(state, bytes(setup.copies[0].view));
}

// ---------------------------------------------------------------------------------------------
// fused ops, copies in turn so that each working set is at least three times a 32 MB L3 (QKV: 6 x
// 18 MB, gate-up: 2 x 80 MB; with two QKV copies, 36 MB, part of them stayed in L3) and twice the
// L3 where it is larger


// Q, K and V of the given formats: Q5_K_M's (Q5_K, Q5_K, Q6_K) or Q4_K_M's (Q4_K, Q4_K, Q6_K).
template <class QFormat, class KFormat, class VFormat>
struct QkvSetupOf {
  static constexpr bool kQkv = true;
  static constexpr std::size_t kHeads = 32, kKvHeads = 8, kHeadDim = 128;
  static constexpr std::size_t kQkvBytes =
      (kHeads + 2 * kKvHeads) * kHeadDim * kHidden / kBlockSize * sizeof(BlockQ6K);  // at most
  std::size_t count = bench::dram_copies(kQkvBytes, 6);
  struct Copy {
    std::unique_ptr<GgmlGraph> graph;
    WeightMatrix q, k, v;
  };
  std::vector<Copy> copies;
  std::vector<float> x = test::normal(kHidden, 31);
  std::vector<float> out = std::vector<float>((kHeads + 2 * kKvHeads) * kHeadDim);
  double weight_bytes = 0;
  QkvSetupOf() {
    for (std::size_t c = 0; c < count; ++c) {
      auto graph = std::make_unique<GgmlGraph>(std::size_t{24} << 20);
      GgmlOracle::Tensor* input = graph->vector(kHidden);
      fill_input(input, x);
      SharedMatrix<QFormat> q(*graph, kHeads * kHeadDim, kHidden, 200 + 3 * c);
      SharedMatrix<KFormat> k(*graph, kKvHeads * kHeadDim, kHidden, 201 + 3 * c);
      SharedMatrix<VFormat> v(*graph, kKvHeads * kHeadDim, kHidden, 202 + 3 * c);
      for (GgmlOracle::Tensor* w : {q.tensor, k.tensor, v.tensor}) {
        graph->output(oracle().ggml_mul_mat(graph->context(), w, input));
      }
      weight_bytes = bytes(q.view) + bytes(k.view) + bytes(v.view);
      copies.push_back({std::move(graph), q.view, k.view, v.view});
    }
  }
  static QkvSetupOf& get() {
    static QkvSetupOf setup;
    return setup;
  }
};

using QkvSetup = QkvSetupOf<quant::detail::Q5KFormat, quant::detail::Q5KFormat, quant::detail::Q6KFormat>;
using QkvQ4KMSetup = QkvSetupOf<quant::detail::Q4KFormat, quant::detail::Q4KFormat, quant::detail::Q6KFormat>;

struct GateUpSetup {
  static constexpr bool kQkv = false;
  std::size_t count = bench::dram_copies(2 * kFfn * kHidden / kBlockSize * sizeof(BlockQ5K), 2);
  struct Copy {
    std::unique_ptr<GgmlGraph> graph;
    WeightMatrix gate, up;
  };
  std::vector<Copy> copies;
  std::vector<float> x = test::normal(kHidden, 41);
  std::vector<float> out = std::vector<float>(kFfn);
  double weight_bytes = 0;
  GateUpSetup() {
    const GgmlExtra& extra = GgmlExtra::get();
    for (std::size_t c = 0; c < count; ++c) {
      auto graph = std::make_unique<GgmlGraph>(2 * kFfn * kHidden / kBlockSize * sizeof(BlockQ5K) + (4u << 20));
      GgmlOracle::Tensor* input = graph->vector(kHidden);
      fill_input(input, x);
      SharedMatrix<quant::detail::Q5KFormat> gate(*graph, kFfn, kHidden, 300 + 2 * c);
      SharedMatrix<quant::detail::Q5KFormat> up(*graph, kFfn, kHidden, 301 + 2 * c);
      GgmlOracle::Context* ctx = graph->context();
      graph->output(extra.mul(ctx, extra.silu(ctx, oracle().ggml_mul_mat(ctx, gate.tensor, input)),
                              oracle().ggml_mul_mat(ctx, up.tensor, input)));
      weight_bytes = bytes(gate.view) + bytes(up.view);
      copies.push_back({std::move(graph), gate.view, up.view});
    }
  }
  static GateUpSetup& get() {
    static GateUpSetup setup;
    return setup;
  }
};

// A matrix in the layout the AVX2 kernels prefer: repacked into `store` where that is not Plain.
WeightMatrix avx2_layout(const WeightMatrix& w, std::vector<RepackedMatrix>& store) {
  if (preferred_layout(w.type(), Backend::Avx2) == WeightLayout::Plain) return w;
  return store.emplace_back(w, preferred_layout(w.type(), Backend::Avx2)).matrix();
}

// The fused op over each copy's matrices, as they are or (kInterleaved) in the AVX2 layout.
template <class Setup, bool kInterleaved>
struct FusedCopies {
  std::vector<RepackedMatrix> store;
  std::vector<std::vector<WeightMatrix>> matrices;
  FusedCopies() {
    store.reserve(3 * Setup::get().copies.size());
    for (const auto& copy : Setup::get().copies) {
      std::vector<WeightMatrix> m;
      if constexpr (Setup::kQkv) {
        m = {copy.q, copy.k, copy.v};
      } else {
        m = {copy.gate, copy.up};
      }
      if constexpr (kInterleaved) {
        for (WeightMatrix& w : m) w = avx2_layout(w, store);
      }
      matrices.push_back(std::move(m));
    }
  }
  static FusedCopies& get() {
    static FusedCopies copies;
    return copies;
  }
};

template <class Setup, bool kInterleaved = false>
void fused_brick(benchmark::State& state, std::optional<RowWalk> walk) {
  const OptionalWalkPin pin(walk);
  const int threads = static_cast<int>(state.range(0));
  Setup& setup = Setup::get();
  const FusedCopies<Setup, kInterleaved>& fused = FusedCopies<Setup, kInterleaved>::get();
  double weight_bytes = 0;
  for (const WeightMatrix& w : fused.matrices.front()) weight_bytes += bytes(w);
  for (std::size_t turn = 0; auto _ : state) {
    const std::vector<WeightMatrix>& m = fused.matrices[turn++ % setup.count];
    if constexpr (Setup::kQkv) {
      const FusedQKVOp op(m[0], m[1], m[2], Setup::kHeads, Setup::kKvHeads, Setup::kHeadDim, pool(threads));
      op.run({setup.x}, setup.out, Backend::Auto);
    } else {
      const FusedGateUpOp op(m[0], m[1], pool(threads));
      op.run({setup.x}, setup.out, Backend::Auto);
    }
  }
  report_bytes(state, weight_bytes);
}

template <class Setup>
void fused_ggml(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  Setup& setup = Setup::get();
  for (std::size_t turn = 0; auto _ : state) setup.copies[turn++ % setup.count].graph->compute_pooled(threads);
  report_bytes(state, setup.weight_bytes);
}

// ---------------------------------------------------------------------------------------------
// thread pool overhead

void pool_empty_call(benchmark::State& state) {
  ThreadPool& p = pool(static_cast<int>(state.range(0)));
  std::size_t sink[2] = {};
  for (auto _ : state) {
    p.parallel_for(2, [&](Range range, std::size_t slot) { sink[slot] += range.begin; });
    benchmark::DoNotOptimize(sink);
  }
}

struct SmallMatvec {
  GgmlGraph graph{1u << 20};
  GgmlOracle::Tensor* input = graph.vector(256);
  SharedMatrix<quant::detail::Q6KFormat> w{graph, 256, 256, 500};
  std::vector<float> x = test::normal(256, 51);
  std::vector<float> y = std::vector<float>(256);
  SmallMatvec() {
    fill_input(input, x);
    graph.output(oracle().ggml_mul_mat(graph.context(), w.tensor, input));
  }
  static SmallMatvec& get() {
    static SmallMatvec setup;
    return setup;
  }
};

void small_matvec_brick(benchmark::State& state) {
  SmallMatvec& setup = SmallMatvec::get();
  ThreadPool& p = pool(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    matvec(setup.w.view, std::span<const float>(setup.x), std::span(setup.y), p);
    benchmark::ClobberMemory();
  }
}

void small_matvec_ggml(benchmark::State& state, bool pooled) {
  SmallMatvec& setup = SmallMatvec::get();
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) pooled ? setup.graph.compute_pooled(threads) : setup.graph.compute_with_ctx(threads);
}

// A thread that keeps a CPU busy with integer work for as long as it lives: with the two pool
// threads on this 2-vCPU machine, one of them is then descheduled part of the time.
class BusyThread {
 public:
  BusyThread()
      : thread_([this] {
          std::uint64_t x = 1;
          while (!stop_.load(std::memory_order_relaxed)) {
            for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005u + 1442695040888963407u;
            benchmark::DoNotOptimize(x);
          }
        }) {}
  ~BusyThread() {
    stop_.store(true, std::memory_order_relaxed);
    thread_.join();
  }
  BusyThread(const BusyThread&) = delete;
  BusyThread& operator=(const BusyThread&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void small_matvec_busy_brick(benchmark::State& state) {
  const BusyThread busy;
  small_matvec_brick(state);
}

void small_matvec_busy_ggml(benchmark::State& state) {
  const BusyThread busy;
  small_matvec_ggml(state, true);
}

// ---------------------------------------------------------------------------------------------
// activation quantization

// x converted into each activation format, by Brick on `backend` and by ggml-cpu's from_float.
struct ActivationRow {
  std::vector<float> x = test::normal(4096, 9);
  std::vector<BlockQ8K> q8k = std::vector<BlockQ8K>(16);
  std::vector<BlockQ80> q8_0 = std::vector<BlockQ80>(128);
  std::vector<fp16_t> halves = std::vector<fp16_t>(4096);
  static ActivationRow& get() {
    static ActivationRow row;
    return row;
  }
};

constexpr const char* kActivationFormats[] = {"q8_K", "q8_0", "f16", "bf16"};

void convert_brick(benchmark::State& state, std::string_view format, Backend backend) {
  ActivationRow& row = ActivationRow::get();
  for (auto _ : state) {
    if (format == "q8_K") quantize_q8k(row.x, row.q8k, backend);
    if (format == "q8_0") quantize_q8_0_activation(row.x, row.q8_0, backend);
    if (format == "f16") fp32_to_fp16_activation(row.x, row.halves, backend);
    if (format == "bf16") fp32_to_bf16_row(row.x, row.halves, backend);
    benchmark::ClobberMemory();
  }
}

void convert_ggml(benchmark::State& state, std::string_view format) {
  ActivationRow& row = ActivationRow::get();
  const auto n = static_cast<std::int64_t>(row.x.size());
  for (auto _ : state) {
    if (format == "q8_K") oracle().quantize_row_q8_K(row.x.data(), row.q8k.data(), n);
    if (format == "q8_0") oracle().quantize_row_q8_0(row.x.data(), row.q8_0.data(), n);
    if (format == "f16") oracle().ggml_cpu_fp32_to_fp16(row.x.data(), row.halves.data(), n);
    if (format == "bf16") oracle().ggml_cpu_fp32_to_bf16(row.x.data(), row.halves.data(), n);
    benchmark::ClobberMemory();
  }
}

// ---------------------------------------------------------------------------------------------
// registration and the summary table

void register_benchmarks() {
  const auto hot = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->MinTime(0.05);
  };
  // Every kernel of the table this CPU runs, but the scalar references, against ggml's dot.
  for_each_format([&](auto format) {
    using Format = decltype(format);
    const char* type = BenchFormat<Format>::kName;
    for (const quant::detail::DotKernel<Format>& kernel : quant::detail::kDotKernels<Format>) {
      if (kernel.isa == quant::detail::Isa::Scalar || !quant::detail::is_supported(kernel.isa)) continue;
      const auto* k = &kernel;
      hot(fmt::format("hot_dot/{}/brick_{}", type, quant::detail::name(kernel.isa)),
          [k](benchmark::State& s) { hot_dot_brick<Format>(s, *k); });
      hot(fmt::format("l2_rows/{}/brick_{}", type, quant::detail::name(kernel.isa)),
          [k](benchmark::State& s) { l2_rows_brick<Format>(s, *k); });
    }
    using Repacked = typename BenchFormat<Format>::Repacked;
    if constexpr (!std::is_void_v<Repacked>) {
      for (const quant::detail::DotKernel<Repacked>& kernel : quant::detail::kDotKernels<Repacked>) {
        if (kernel.isa == quant::detail::Isa::Scalar || !quant::detail::is_supported(kernel.isa)) continue;
        const auto* k = &kernel;
        const std::string_view suffix = layout_suffix(Repacked::kLayout);
        hot(fmt::format("hot_dot/{}/brick_{}{}", type, quant::detail::name(kernel.isa), suffix),
            [k](benchmark::State& s) { hot_dot_repacked<Format, Repacked>(s, *k); });
        hot(fmt::format("l2_rows/{}/brick_{}{}", type, quant::detail::name(kernel.isa), suffix),
            [k](benchmark::State& s) { l2_rows_repacked<Format, Repacked>(s, *k); });
      }
    }
    hot(fmt::format("hot_dot/{}/ggml", type), hot_dot_ggml<Format>);
    hot(fmt::format("l2_rows/{}/ggml", type), l2_rows_ggml<Format>);
  });

  const auto threaded = [](const std::string& name, auto fn, double min_time) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Arg(1)->Arg(2)->UseRealTime()->MinTime(min_time);
  };
  threaded("bandwidth/2streams", bandwidth<2, false>, 0.1);
  threaded("bandwidth/4streams", bandwidth<4, false>, 0.1);
  threaded("bandwidth/8streams", bandwidth<8, false>, 0.1);
  threaded("bandwidth/2streams_prefetch", bandwidth<2, true>, 0.1);
  threaded("bandwidth/4streams_prefetch", bandwidth<4, true>, 0.1);
  threaded("bandwidth/8streams_prefetch", bandwidth<8, true>, 0.1);
  for_each_format([&](auto format) {
    using Format = decltype(format);
    const char* type = BenchFormat<Format>::kName;
    using Repacked = typename BenchFormat<Format>::Repacked;
    const auto brick = [&](std::optional<RowWalk> walk, std::string_view walk_suffix) {
      threaded(
          fmt::format("matvec/{}/brick{}", type, walk_suffix),
          [walk](benchmark::State& s) { matvec_brick<Format>(s, walk); }, 0.1);
      if constexpr (!std::is_void_v<Repacked>) {
        threaded(
            fmt::format("matvec/{}/brick{}{}", type, layout_suffix(Repacked::kLayout), walk_suffix),
            [walk](benchmark::State& s) { matvec_repacked<Format>(s, walk); }, 0.1);
      }
    };
    brick(std::nullopt, "");
    if constexpr (kFollowsRowWalk<Format>) {
      for (const auto& [walk, suffix] : kPinnedWalks) brick(walk, suffix);
    }
    threaded(fmt::format("matvec/{}/ggml", type), [](benchmark::State& s) { matvec_ggml<Format>(s, false); }, 0.1);
    threaded(fmt::format("matvec/{}/ggml_pool", type), [](benchmark::State& s) { matvec_ggml<Format>(s, true); }, 0.1);
  });
  const auto fused = [&](std::string_view op, auto setup) {
    using Setup = typename decltype(setup)::type;
    const auto brick = [&](std::optional<RowWalk> walk, std::string_view walk_suffix) {
      threaded(
          fmt::format("fused/{}/brick{}", op, walk_suffix),
          [walk](benchmark::State& s) { fused_brick<Setup>(s, walk); }, 0.1);
      threaded(
          fmt::format("fused/{}/brick_interleaved{}", op, walk_suffix),
          [walk](benchmark::State& s) { fused_brick<Setup, true>(s, walk); }, 0.1);
    };
    brick(std::nullopt, "");
    for (const auto& [walk, suffix] : kPinnedWalks) brick(walk, suffix);
    threaded(fmt::format("fused/{}/ggml_pool", op), fused_ggml<Setup>, 0.1);
  };
  fused("qkv", std::type_identity<QkvSetup>{});
  fused("qkv_q4km", std::type_identity<QkvQ4KMSetup>{});
  fused("gate_up", std::type_identity<GateUpSetup>{});
  threaded("pool/empty_call", pool_empty_call, 0.05);
  threaded("pool/matvec256/brick", small_matvec_brick, 0.05);
  threaded("pool/matvec256/ggml", [](benchmark::State& s) { small_matvec_ggml(s, false); }, 0.05);
  threaded("pool/matvec256/ggml_pool", [](benchmark::State& s) { small_matvec_ggml(s, true); }, 0.05);
  const auto busy = [](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Arg(2)->UseRealTime()->MinTime(0.05);
  };
  busy("pool/matvec256_busy/brick", small_matvec_busy_brick);
  busy("pool/matvec256_busy/ggml_pool", small_matvec_busy_ggml);
  for (Backend backend : kConcreteBackends) {
    if (!is_supported(backend)) continue;
    for (const char* format : kActivationFormats) {
      hot(fmt::format("convert_{}/brick_{}", format, name(backend)),
          [format, backend](benchmark::State& s) { convert_brick(s, format, backend); });
    }
  }
  for (const char* format : kActivationFormats) {
    hot(fmt::format("convert_{}/ggml", format), [format](benchmark::State& s) { convert_ggml(s, format); });
  }
}

// Keeps every repetition's time per iteration, by benchmark name ("matvec/q6k/brick/2").
class Collector : public benchmark::ConsoleReporter {
 public:
  enum class Clock { Cpu, Wall };

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      const std::string key = run.run_name.function_name + (run.run_name.args.empty() ? "" : "/" + run.run_name.args);
      Measurement& m = measurements_[key];
      const auto iterations = static_cast<double>(run.iterations);
      m.cpu_ns.push_back(run.cpu_accumulated_time * 1e9 / iterations);
      m.wall_ns.push_back(run.real_accumulated_time * 1e9 / iterations);
      const auto bytes = run.counters.find("bytes");
      if (bytes != run.counters.end()) m.bytes = bytes->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Median ns per iteration. Cpu is the calling thread's CPU time: on this VM the host often
  // deschedules a vCPU, and the wall clock then counts time no code of ours (or ggml's) ran.
  double ns(const std::string& name, Clock clock = Clock::Cpu) const {
    const auto it = measurements_.find(name);
    if (it == measurements_.end()) return 0.0;
    return median(clock == Clock::Cpu ? it->second.cpu_ns : it->second.wall_ns);
  }
  double gbps(const std::string& name, Clock clock = Clock::Cpu) const {
    const auto it = measurements_.find(name);
    const double t = ns(name, clock);
    return it == measurements_.end() || t == 0.0 ? 0.0 : it->second.bytes / t;
  }
  // The most repetitions any benchmark of the run had (the filter may have left any one out).
  std::size_t repetitions() const {
    std::size_t most = 0;
    for (const auto& [name, m] : measurements_) most = std::max(most, m.cpu_ns.size());
    return most;
  }

 private:
  struct Measurement {
    std::vector<double> cpu_ns;
    std::vector<double> wall_ns;
    double bytes = 0.0;
  };
  static double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  std::map<std::string, Measurement> measurements_;
};

// The best of the read-bandwidth probes at `threads` threads.
double read_bandwidth(const Collector& c, int threads, Collector::Clock clock = Collector::Clock::Cpu) {
  double best = 0.0;
  for (std::size_t streams : bench::kProbeStreams) {
    for (const char* prefetch : {"", "_prefetch"}) {
      best = std::max(best, c.gbps(fmt::format("bandwidth/{}streams{}/{}", streams, prefetch, threads), clock));
    }
  }
  return best;
}

// The suffixes of the mat-vec and fused benchmarks' Brick variants: each layout, as this CPU walks
// its rows and with each walk pinned.
const std::vector<std::string> kBrickVariants = [] {
  std::vector<std::string> variants;
  for (const char* layout : {"", "_interleaved", "_grouped"}) {
    variants.emplace_back(layout);
    for (const auto& [walk, suffix] : kPinnedWalks) variants.push_back(fmt::format("{}{}", layout, suffix));
  }
  return variants;
}();

void print_summary(const Collector& c) {
  using Clock = Collector::Clock;
  fmt::print("\n## k-quant summary: medians of {} interleaved repetitions, ggml {} ({})\n",
             c.repetitions(), oracle().version(), oracle().cpu_variant());
  fmt::print("Times are the calling thread's CPU time unless marked wall.\n");
  fmt::print("This CPU walks the k-quant rows {} (quant/row_walk.hpp); _four_runs and _one_after_another pin a walk.\n",
             quant::detail::row_walk() == RowWalk::FourRuns ? "as four runs" : "one after another");
  if (g_huge_pages) {
    fmt::print("Weights and probe in memory advised MADV_HUGEPAGE; {} MiB of the process on huge pages.\n",
               anon_huge_pages_mib());
  } else {
    fmt::print("Weights and probe on ordinary pages (--brick_huge_pages for huge pages).\n");
  }
  fmt::print("\n");
  // Per 256 values (a k-quant block, eight Q8_0 blocks), so that the formats compare.
  const auto kernel_table = [&](const char* title, const char* bench, bool rows) {
    fmt::print("| {} | ns/256 values brick | ns/256 values ggml | speedup |\n|---|---|---|---|\n", title);
    for_each_format([&](auto format) {
      using Format = decltype(format);
      const char* type = BenchFormat<Format>::kName;
      const double per_call = rows ? 16.0 * l2_rows<Format>() : 16.0;
      const double ggml = c.ns(fmt::format("{}/{}/ggml", bench, type)) / per_call;
      for (const char* layout : {"", "_interleaved", "_grouped"}) {
        for (quant::detail::Isa isa : quant::detail::kIsas) {
          const std::string kernel = fmt::format("{}{}", quant::detail::name(isa), layout);
          const double ours = c.ns(fmt::format("{}/{}/brick_{}", bench, type, kernel)) / per_call;
          if (ours > 0) fmt::print("| {} {} | {:.2f} | {:.2f} | {:.2f}x |\n", type, kernel, ours, ggml, ggml / ours);
        }
      }
    });
  };
  kernel_table("hot dot, 4096-value row in L1", "hot_dot", false);
  fmt::print("\n");
  kernel_table("rows of 4096 in L2 (128, or 512 KiB)", "l2_rows", true);
  fmt::print("\n| read bandwidth probe | threads | 2 streams GB/s | 4 streams GB/s | 8 streams GB/s |\n|---|---|---|---|---|\n");
  for (const char* prefetch : {"", "_prefetch"}) {
    for (int t : {1, 2}) {
      fmt::print("| {} MiB, widest loads{} | {}", bench::ReadProbe::bytes() >> 20, *prefetch ? ", prefetch 8 KiB ahead" : "",
                 t);
      for (std::size_t streams : bench::kProbeStreams) {
        fmt::print(" | {:.1f}", c.gbps(fmt::format("bandwidth/{}streams{}/{}", streams, prefetch, t)));
      }
      fmt::print(" |\n");
    }
  }
  const std::size_t q4k_bytes = matrix_bytes<quant::detail::Q4KFormat>();
  const std::size_t q4k_copies = bench::dram_copies(q4k_bytes, 3);
  fmt::print("\nL3 {} MiB: each mat-vec takes turns over copies of its matrix, for Q4_K {} ({} MB).\n",
             bench::l3_cache_bytes() >> 20, q4k_copies, q4k_copies * q4k_bytes / 1000000);
  for (Clock clock : {Clock::Cpu, Clock::Wall}) {
    fmt::print("\n| matvec 14336x4096, DRAM{} | threads | read GB/s (best probe) | brick GB/s (of read) | ggml GB/s (of read) | "
               "ggml pooled GB/s (of read) | brick vs ggml | brick vs ggml pooled |\n|---|---|---|---|---|---|---|---|\n",
               clock == Clock::Wall ? ", wall" : "");
    for_each_format([&](auto format) {
      const char* type = BenchFormat<decltype(format)>::kName;
      for (const std::string& layout : kBrickVariants) {
        for (int t : {1, 2}) {
          const double bw = read_bandwidth(c, t, clock);
          // Both sides as values per second, in the bytes of the plain matrix (a repacked one is
          // larger).
          const double ours_ns = c.ns(fmt::format("matvec/{}/brick{}/{}", type, layout, t), clock);
          const double plain_bytes = static_cast<double>(matrix_bytes<decltype(format)>());
          const double ours = ours_ns == 0 ? 0 : c.gbps(fmt::format("matvec/{}/brick{}/{}", type, layout, t), clock);
          const double ggml = c.gbps(fmt::format("matvec/{}/ggml/{}", type, t), clock);
          const double pooled = c.gbps(fmt::format("matvec/{}/ggml_pool/{}", type, t), clock);
          if (ours == 0) continue;  // filtered out
          const double speed = plain_bytes / ours_ns;  // plain-matrix GB/s
          fmt::print("| {}{} | {} | {:.1f} | {:.1f} ({:.0f}%) | {:.1f} ({:.0f}%) | {:.1f} ({:.0f}%) | {:.2f}x | {:.2f}x |\n",
                     type, layout, t, bw, ours, 100 * ours / bw, ggml, 100 * ggml / bw, pooled, 100 * pooled / bw,
                     speed / ggml, speed / pooled);
        }
      }
    });
  }
  fmt::print("\n| fused, DRAM | threads | brick us | ggml separate mat-vecs (pooled) us | speedup | brick GB/s (of read) | wall speedup |\n"
             "|---|---|---|---|---|---|---|\n");
  for (const char* op : {"qkv", "qkv_q4km", "gate_up"}) {
    for (const std::string& layout : kBrickVariants) {
      for (int t : {1, 2}) {
        const std::string ours = fmt::format("fused/{}/brick{}/{}", op, layout, t);
        const std::string ggml = fmt::format("fused/{}/ggml_pool/{}", op, t);
        const double bw = read_bandwidth(c, t);
        if (c.ns(ours) == 0) continue;
        fmt::print("| {}{} | {} | {:.1f} | {:.1f} | {:.2f}x | {:.1f} ({:.0f}%) | {:.2f}x |\n", op, layout, t,
                   c.ns(ours) / 1e3, c.ns(ggml) / 1e3, c.ns(ggml) / c.ns(ours), c.gbps(ours), 100 * c.gbps(ours) / bw,
                   c.ns(ggml, Clock::Wall) / c.ns(ours, Clock::Wall));
      }
    }
  }
  fmt::print("\n| per call | threads | brick us | ggml with_ctx us | ggml pooled us | brick wall us |\n|---|---|---|---|---|---|\n");
  for (int t : {1, 2}) {
    const std::string empty = fmt::format("pool/empty_call/{}", t);
    fmt::print("| empty parallel_for | {} | {:.3f} | | | {:.3f} |\n", t, c.ns(empty) / 1e3, c.ns(empty, Clock::Wall) / 1e3);
    const std::string ours = fmt::format("pool/matvec256/brick/{}", t);
    if (c.ns(ours) == 0) continue;
    fmt::print("| 256x256 Q6_K matvec | {} | {:.3f} | {:.3f} | {:.3f} | {:.3f} |\n", t, c.ns(ours) / 1e3,
               c.ns(fmt::format("pool/matvec256/ggml/{}", t)) / 1e3,
               c.ns(fmt::format("pool/matvec256/ggml_pool/{}", t)) / 1e3, c.ns(ours, Clock::Wall) / 1e3);
  }
  if (c.ns("pool/matvec256_busy/brick/2", Clock::Wall) > 0) {
    fmt::print("| 256x256 Q6_K matvec, a third thread busy (wall) | 2 | {:.3f} | | {:.3f} | {:.3f} |\n",
               c.ns("pool/matvec256_busy/brick/2", Clock::Wall) / 1e3,
               c.ns("pool/matvec256_busy/ggml_pool/2", Clock::Wall) / 1e3,
               c.ns("pool/matvec256_busy/brick/2", Clock::Wall) / 1e3);
  }
  fmt::print("\n| convert a 4096-value x to | ns brick | ns ggml from_float | speedup |\n|---|---|---|---|\n");
  for (const char* format : kActivationFormats) {
    const double ggml = c.ns(fmt::format("convert_{}/ggml", format));
    for (Backend backend : kConcreteBackends) {
      const double ours = c.ns(fmt::format("convert_{}/brick_{}", format, name(backend)));
      if (ours > 0) fmt::print("| {} {} | {:.0f} | {:.0f} | {:.2f}x |\n", format, name(backend), ours, ggml, ggml / ours);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Defaults that make the side-by-side comparison meaningful on a noisy machine; flags given on the
  // command line win.
  std::vector<char*> args(argv, argv + argc);
  const auto huge = std::find_if(args.begin() + 1, args.end(),
                                 [](const char* a) { return std::strcmp(a, "--brick_huge_pages") == 0; });
  if (huge != args.end()) {
    g_huge_pages = true;
    args.erase(huge);
  }
  std::vector<std::string> added;
  brick::bench::add_comparison_defaults(args, added, 9);
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  fmt::print("ggml oracle: {}\n", oracle().describe());
  register_benchmarks();
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  print_summary(collector);
  benchmark::Shutdown();
  return 0;
}
