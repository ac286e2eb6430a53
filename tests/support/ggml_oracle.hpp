#pragma once
// The ggml oracle: real ggml shared libraries (npm @node-llama-cpp/linux-x64, pinned in
// scripts/setup) opened with dlopen, for differential tests and side-by-side benchmarks. Only
// ggml's public C entry points are used; the structs passed by value are declared here the way
// ggml.h declares them.
//
// libggml-base.so holds the reference quantizers and the graph API; one libggml-cpu-<variant>.so
// holds the CPU kernels. The variant is the best one this CPU runs (see cpu_variant()), or the one
// named by the environment variable BRICK_ORACLE_CPU (e.g. "haswell"). The folder is the build's
// BRICK_ORACLE_DIR unless the environment variable of that name says otherwise.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "brick/core/cpu_features.hpp"
#include "brick/quant/bf16.hpp"
#include "brick/quant/kquants.hpp"
#include "brick/quant/q8_0.hpp"

namespace brick::test {

// ggml's enum ggml_type values for the types Brick compares against (checked at load time against
// ggml_type_size / ggml_blck_size).
enum class GgmlType : int { F32 = 0, F16 = 1, Q8_0 = 8, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15, BF16 = 30 };

class GgmlOracle {
 public:
  // Row-level C signatures, as exported.
  using QuantizeRowFn = void (*)(const float* x, void* y, std::int64_t k);
  using DequantizeRowFn = void (*)(const void* x, float* y, std::int64_t k);
  using VecDotFn = void (*)(int n, float* s, std::size_t bs, const void* x, std::size_t bx,
                            const void* y, std::size_t by, int nrc);
  using QuantizeChunkFn = std::size_t (*)(int type, const float* src, void* dst, std::int64_t start,
                                          std::int64_t nrows, std::int64_t n_per_row,
                                          const float* imatrix);

  // Opens the libraries once per process and returns the shared instance. Throws brick::IoError
  // when they are missing or unusable; the message says to run ./scripts/setup. Differential tests
  // call this and fail (never skip) when it throws.
  static const GgmlOracle& load();

  // The libggml-cpu variants this CPU can run, best first ("zen4", "icelake", "skylakex",
  // "haswell", "x64"), from Brick's own CPU feature probe.
  static std::vector<std::string> cpu_variant_preference(const CpuFeatures& features);

  GgmlOracle(const GgmlOracle&) = delete;
  GgmlOracle& operator=(const GgmlOracle&) = delete;
  ~GgmlOracle();

  const std::string& directory() const noexcept { return directory_; }
  const std::string& base_library_path() const noexcept { return base_path_; }
  const std::string& cpu_library_path() const noexcept { return cpu_path_; }
  const std::string& cpu_variant() const noexcept { return cpu_variant_; }
  const std::string& version() const noexcept { return version_; }  // ggml_version(), e.g. "0.23.0"
  const std::string& commit() const noexcept { return commit_; }    // ggml_commit()
  // One line for reports: version, commit, the CPU library's path.
  std::string describe() const;

  // Typed wrappers. Sizes must match (256 values per block); they throw brick::InvalidArgument if
  // not.
  void quantize_q4k_ref(std::span<const float> x, std::span<quant::BlockQ4K> out) const;
  void quantize_q5k_ref(std::span<const float> x, std::span<quant::BlockQ5K> out) const;
  void quantize_q6k_ref(std::span<const float> x, std::span<quant::BlockQ6K> out) const;
  void quantize_q8k_ref(std::span<const float> x,
                        std::span<quant::BlockQ8K> out) const;  // base lib
  void quantize_q8k(std::span<const float> x,
                    std::span<quant::BlockQ8K> out) const;  // CPU lib (matmul path)
  void quantize_q8_0_ref(std::span<const float> x, std::span<quant::BlockQ80> out) const;  // base lib
  // The CPU library's from_float for the activations of each weight type (what its mat-vec runs).
  void quantize_q8_0(std::span<const float> x, std::span<quant::BlockQ80> out) const;
  void cpu_fp32_to_fp16(std::span<const float> x, std::span<quant::fp16_t> out) const;
  void cpu_fp32_to_bf16(std::span<const float> x, std::span<quant::bf16_t> out) const;
  // ggml_quantize_chunk without an importance matrix: what llama-quantize writes into a model file.
  // The generic one writes rows of n_per_row values of any type into their bytes.
  std::vector<std::byte> quantize_chunk(GgmlType type, std::span<const float> x, std::size_t n_per_row) const;
  void quantize_chunk_q5k(std::span<const float> x, std::size_t n_per_row,
                          std::span<quant::BlockQ5K> out) const;
  void quantize_chunk_q6k(std::span<const float> x, std::size_t n_per_row,
                          std::span<quant::BlockQ6K> out) const;
  void dequantize_q4k(std::span<const quant::BlockQ4K> in, std::span<float> out) const;
  void dequantize_q5k(std::span<const quant::BlockQ5K> in, std::span<float> out) const;
  void dequantize_q6k(std::span<const quant::BlockQ6K> in, std::span<float> out) const;
  void dequantize_q8k(std::span<const quant::BlockQ8K> in, std::span<float> out) const;
  void dequantize_q8_0(std::span<const quant::BlockQ80> in, std::span<float> out) const;
  // The CPU library's dispatched dot (the SIMD path of the chosen variant) and its portable C one.
  float vec_dot_q4k_q8k(std::span<const quant::BlockQ4K> w, std::span<const quant::BlockQ8K> x) const;
  float vec_dot_q5k_q8k(std::span<const quant::BlockQ5K> w,
                        std::span<const quant::BlockQ8K> x) const;
  float vec_dot_q6k_q8k(std::span<const quant::BlockQ6K> w,
                        std::span<const quant::BlockQ8K> x) const;
  float vec_dot_q8_0_q8_0(std::span<const quant::BlockQ80> w, std::span<const quant::BlockQ80> x) const;
  float vec_dot_f16(std::span<const quant::fp16_t> w, std::span<const quant::fp16_t> x) const;
  float vec_dot_bf16(std::span<const quant::bf16_t> w, std::span<const quant::bf16_t> x) const;
  float vec_dot_q4k_q8k_generic(std::span<const quant::BlockQ4K> w, std::span<const quant::BlockQ8K> x) const;
  float vec_dot_q5k_q8k_generic(std::span<const quant::BlockQ5K> w,
                                std::span<const quant::BlockQ8K> x) const;
  float vec_dot_q6k_q8k_generic(std::span<const quant::BlockQ6K> w,
                                std::span<const quant::BlockQ8K> x) const;
  float vec_dot_q8_0_q8_0_generic(std::span<const quant::BlockQ80> w, std::span<const quant::BlockQ80> x) const;

  // Raw entry points, for benchmarks that must call ggml with no wrapper in between.
  QuantizeRowFn quantize_row_q4_K_ref = nullptr;
  QuantizeRowFn quantize_row_q5_K_ref = nullptr;
  QuantizeRowFn quantize_row_q6_K_ref = nullptr;
  QuantizeRowFn quantize_row_q8_K_ref = nullptr;
  QuantizeRowFn quantize_row_q8_K = nullptr;
  QuantizeRowFn quantize_row_q8_0_ref = nullptr;
  QuantizeRowFn quantize_row_q8_0 = nullptr;  // CPU lib
  DequantizeRowFn dequantize_row_q4_K = nullptr;
  DequantizeRowFn dequantize_row_q8_0 = nullptr;
  DequantizeRowFn dequantize_row_q5_K = nullptr;
  DequantizeRowFn dequantize_row_q6_K = nullptr;
  DequantizeRowFn dequantize_row_q8_K = nullptr;
  QuantizeChunkFn ggml_quantize_chunk = nullptr;
  VecDotFn ggml_vec_dot_q4_K_q8_K = nullptr;
  VecDotFn ggml_vec_dot_q5_K_q8_K = nullptr;
  VecDotFn ggml_vec_dot_q6_K_q8_K = nullptr;
  VecDotFn ggml_vec_dot_q5_K_q8_K_generic = nullptr;
  VecDotFn ggml_vec_dot_q6_K_q8_K_generic = nullptr;
  VecDotFn ggml_vec_dot_q4_K_q8_K_generic = nullptr;
  VecDotFn ggml_vec_dot_q8_0_q8_0 = nullptr;
  VecDotFn ggml_vec_dot_q8_0_q8_0_generic = nullptr;
  VecDotFn ggml_vec_dot_f16 = nullptr;
  VecDotFn ggml_vec_dot_bf16 = nullptr;
  // ggml's portable fp16 conversions (libggml-base), the ones its reference quantizers use.
  void (*ggml_fp16_to_fp32_row)(const std::uint16_t* x, float* y, std::int64_t n) = nullptr;
  void (*ggml_fp32_to_fp16_row)(const float* x, std::uint16_t* y, std::int64_t n) = nullptr;
  void (*ggml_bf16_to_fp32_row)(const std::uint16_t* x, float* y, std::int64_t n) = nullptr;
  void (*ggml_fp32_to_bf16_row_ref)(const float* x, std::uint16_t* y, std::int64_t n) = nullptr;
  // The CPU library's conversions of x for F16 and BF16 weights (its from_float).
  void (*ggml_cpu_fp32_to_fp16)(const float* x, std::uint16_t* y, std::int64_t n) = nullptr;
  void (*ggml_cpu_fp32_to_bf16)(const float* x, std::uint16_t* y, std::int64_t n) = nullptr;

  // The graph API, for mat-vecs computed the way llama.cpp computes them (see GgmlMatVec).
  struct InitParams {  // struct ggml_init_params
    std::size_t mem_size;
    void* mem_buffer;
    bool no_alloc;
  };
  struct Context;     // struct ggml_context
  struct Tensor;      // struct ggml_tensor
  struct Graph;       // struct ggml_cgraph
  struct ThreadPool;  // struct ggml_threadpool
  // struct ggml_cplan: ggml_graph_plan fills it, the caller provides work_data. Later ggml versions
  // may append fields; the reserved tail keeps them inside this object.
  struct ComputePlan {
    std::size_t work_size;
    std::uint8_t* work_data;
    int n_threads;
    ThreadPool* threadpool;
    void* abort_callback;
    void* abort_callback_data;
    unsigned char reserved[64];
  };
  Context* (*ggml_init)(InitParams params) = nullptr;
  void (*ggml_free)(Context* ctx) = nullptr;
  std::size_t (*ggml_tensor_overhead)() = nullptr;
  std::size_t (*ggml_graph_overhead)() = nullptr;
  std::size_t (*ggml_row_size)(int type, std::int64_t ne) = nullptr;
  std::int64_t (*ggml_blck_size)(int type) = nullptr;
  std::size_t (*ggml_nbytes)(const Tensor* tensor) = nullptr;
  Tensor* (*ggml_new_tensor_1d)(Context* ctx, int type, std::int64_t ne0) = nullptr;
  Tensor* (*ggml_new_tensor_2d)(Context* ctx, int type, std::int64_t ne0,
                                std::int64_t ne1) = nullptr;
  void* (*ggml_get_data)(const Tensor* tensor) = nullptr;
  Tensor* (*ggml_mul_mat)(Context* ctx, Tensor* a, Tensor* b) = nullptr;
  Graph* (*ggml_new_graph)(Context* ctx) = nullptr;
  void (*ggml_build_forward_expand)(Graph* graph, Tensor* tensor) = nullptr;
  // Returns enum ggml_status (0 = success). Creates and joins its threads on every call.
  int (*ggml_graph_compute_with_ctx)(Context* ctx, Graph* graph, int n_threads) = nullptr;
  // A persistent pool: ggml_threadpool_params_init fills an opaque struct ggml_threadpool_params.
  void (*ggml_threadpool_params_init)(void* params, int n_threads) = nullptr;
  ThreadPool* (*ggml_threadpool_new)(void* params) = nullptr;
  void (*ggml_threadpool_free)(ThreadPool* pool) = nullptr;
  ComputePlan (*ggml_graph_plan)(const Graph* graph, int n_threads, ThreadPool* pool) = nullptr;
  int (*ggml_graph_compute)(Graph* graph, ComputePlan* plan) = nullptr;

  // The backend API, the way llama.cpp runs a model: weights in a backend buffer (the CPU
  // backend's CPU_REPACK buffer type re-lays them out for its gemv kernels when it can).
  struct Backend;     // ggml_backend_t
  struct Buffer;      // ggml_backend_buffer_t
  struct BufferType;  // ggml_backend_buffer_type_t
  struct Device;      // ggml_backend_dev_t
  struct Registry;    // ggml_backend_reg_t
  Buffer* (*ggml_backend_alloc_ctx_tensors_from_buft)(Context* ctx, BufferType* type) = nullptr;
  void (*ggml_backend_buffer_free)(Buffer* buffer) = nullptr;
  const char* (*ggml_backend_buft_name)(BufferType* type) = nullptr;
  void (*ggml_backend_tensor_set)(Tensor* tensor, const void* data, std::size_t offset,
                                  std::size_t size) = nullptr;
  int (*ggml_backend_graph_compute)(Backend* backend, Graph* graph) = nullptr;  // enum ggml_status
  void (*ggml_backend_free)(Backend* backend) = nullptr;
  Device* (*ggml_backend_reg_dev_get)(Registry* reg, std::size_t index) = nullptr;
  void* (*ggml_backend_reg_get_proc_address)(Registry* reg, const char* name) = nullptr;
  BufferType* (*ggml_backend_dev_buffer_type)(Device* device) = nullptr;
  bool (*ggml_backend_dev_supports_op)(Device* device, const Tensor* op) = nullptr;
  Backend* (*ggml_backend_cpu_init)() = nullptr;
  void (*ggml_backend_cpu_set_n_threads)(Backend* backend, int n_threads) = nullptr;
  Registry* (*ggml_backend_cpu_reg)() = nullptr;

 private:
  GgmlOracle() = default;
  void open();

  std::string directory_;
  std::string base_path_;
  std::string cpu_path_;
  std::string cpu_variant_;
  std::string version_;
  std::string commit_;
  void* base_handle_ = nullptr;
  void* cpu_handle_ = nullptr;
};

// A weight matrix (rows x cols, any ggml type above but Q8_K) times an f32 vector through ggml's
// graph API: ggml_mul_mat + ggml_graph_compute_with_ctx (threads created per call, llama.cpp's
// plain API), or + ggml_graph_compute on a persistent ggml thread pool. Fill weights() and input(),
// compute, read output(). Not copyable; owns its ggml context and pool.
class GgmlMatVec {
 public:
  GgmlMatVec(const GgmlOracle& oracle, GgmlType type, std::size_t rows, std::size_t cols);
  ~GgmlMatVec();
  GgmlMatVec(const GgmlMatVec&) = delete;
  GgmlMatVec& operator=(const GgmlMatVec&) = delete;

  std::span<std::byte> weights() noexcept { return weights_; }        // row-major, rows * row_bytes
  std::span<float> input() noexcept { return input_; }                // cols values
  std::span<const float> output() const noexcept { return output_; }  // rows values
  std::size_t row_bytes() const noexcept { return weights_.size() / rows_; }

  // ggml_graph_compute_with_ctx(ctx, graph, n_threads). Throws brick::StateError if ggml fails.
  void compute(int n_threads);
  // ggml_graph_compute on a pool of n_threads kept between calls (created on first use, recreated
  // when n_threads changes).
  void compute_pooled(int n_threads);

 private:
  const GgmlOracle& oracle_;
  std::size_t rows_;
  GgmlOracle::Context* context_ = nullptr;
  GgmlOracle::Graph* graph_ = nullptr;
  GgmlOracle::ThreadPool* pool_ = nullptr;
  int pool_threads_ = 0;
  std::vector<std::uint8_t> work_;
  std::span<std::byte> weights_;
  std::span<float> input_;
  std::span<float> output_;
};

// The same mat-vec through ggml's backend API, as llama.cpp runs it: the weight matrix is uploaded
// with ggml_backend_tensor_set into the CPU backend's CPU_REPACK buffer type when `repack` is asked
// for and ggml's device says it supports this mat-vec from that buffer (the check llama.cpp makes;
// ggml then re-lays the rows out for its gemv kernels), else into the plain CPU buffer;
// ggml_backend_graph_compute runs it with ggml_backend_cpu_set_n_threads threads (created per
// call).
class GgmlBackendMatVec {
 public:
  // `tokens` input vectors at once (ggml_mul_mat with a cols x tokens input: the GEMM of a prompt).
  GgmlBackendMatVec(const GgmlOracle& oracle, GgmlType type, std::size_t rows, std::size_t cols,
                    std::span<const std::byte> weights, bool repack, std::size_t tokens = 1);
  ~GgmlBackendMatVec();
  GgmlBackendMatVec(const GgmlBackendMatVec&) = delete;
  GgmlBackendMatVec& operator=(const GgmlBackendMatVec&) = delete;

  // Whether ggml changed the weights' layout on upload (it repacked them for its own kernels).
  bool repacked() const noexcept { return repacked_; }
  const std::string& weight_buffer_type() const noexcept { return weight_buffer_type_; }
  std::span<float> input() noexcept { return input_; }                // tokens rows of cols values
  std::span<const float> output() const noexcept { return output_; }  // tokens rows of rows values

  // Throws brick::StateError if ggml fails.
  void compute(int n_threads);

 private:
  void release() noexcept;

  const GgmlOracle& oracle_;
  GgmlOracle::Backend* backend_ = nullptr;
  GgmlOracle::Context* weight_context_ = nullptr;
  GgmlOracle::Context* compute_context_ = nullptr;
  GgmlOracle::Buffer* weight_buffer_ = nullptr;
  GgmlOracle::Buffer* compute_buffer_ = nullptr;
  GgmlOracle::Graph* graph_ = nullptr;
  bool repacked_ = false;
  std::string weight_buffer_type_;
  std::span<float> input_;
  std::span<float> output_;
};

}  // namespace brick::test
