#include "support/ggml_oracle.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include "brick/core/error.hpp"

#if defined(__SANITIZE_THREAD__)
// ggml is not built with ThreadSanitizer: its workers synchronise with the caller through atomics
// TSan cannot see, so the memcpy calls they make into output tensors look unordered with the
// caller's later reads. Reports whose stacks pass through ggml are false positives by construction.
extern "C" const char* __tsan_default_suppressions() {
  return "race:libggml-base.so\nrace:libggml-cpu-\n";
}
#endif

namespace brick::test {
namespace {

constexpr std::string_view kSetupHint =
    "the ggml oracle is part of the test suite; install it with ./scripts/setup "
    "(or point BRICK_ORACLE_DIR at a folder holding libggml-base.so and libggml-cpu-*.so)";

std::string oracle_directory() {
  if (const char* dir = std::getenv("BRICK_ORACLE_DIR"); dir != nullptr && *dir != '\0') return dir;
  return BRICK_ORACLE_DIR;
}

[[noreturn]] void fail(const std::string& what) {
  throw IoError(fmt::format("ggml oracle: {}; {}", what, kSetupHint));
}

template <typename Fn>
void resolve(void* handle, const char* library, const char* symbol, Fn& out) {
  dlerror();
  void* address = dlsym(handle, symbol);
  if (address == nullptr) fail(fmt::format("{} does not export {}", library, symbol));
  out = reinterpret_cast<Fn>(address);
}

void require_blocks(const char* what, std::size_t values, std::size_t blocks) {
  if (values != quant::kBlockSize * blocks) {
    throw InvalidArgument(fmt::format("ggml oracle {}: {} values do not fill {} blocks of 256",
                                      what, values, blocks));
  }
}

// `values_per_block` values per weight block (1 for F16 and BF16 rows).
template <typename Block, typename ActivationBlock>
float vec_dot(GgmlOracle::VecDotFn fn, const char* what, std::span<const Block> w,
              std::span<const ActivationBlock> x, std::size_t values_per_block) {
  if (w.size() != x.size()) {
    throw InvalidArgument(fmt::format(
        "ggml oracle {}: {} weight blocks against {} activation blocks", what, w.size(), x.size()));
  }
  float result = 0.0f;
  fn(static_cast<int>(values_per_block * w.size()), &result, 0, w.data(), 0, x.data(), 0, 1);
  return result;
}

template <typename Block>
float vec_dot(GgmlOracle::VecDotFn fn, const char* what, std::span<const Block> w,
              std::span<const quant::BlockQ8K> x) {
  return vec_dot(fn, what, w, x, quant::kBlockSize);
}

void require_same_size(const char* what, std::size_t in, std::size_t out) {
  if (in != out) throw InvalidArgument(fmt::format("ggml oracle {}: {} values into room for {}", what, in, out));
}

void require_whole_blocks(const GgmlOracle& oracle, const char* what, GgmlType type, std::size_t rows,
                          std::size_t cols) {
  if (rows == 0 || cols == 0 || cols % static_cast<std::size_t>(oracle.ggml_blck_size(static_cast<int>(type))) != 0) {
    throw InvalidArgument(fmt::format("{}: {}x{} is not a matrix of whole blocks of ggml type {}", what, rows, cols,
                                      static_cast<int>(type)));
  }
}

// The CPU backend's CPU_REPACK buffer type, or nullptr when this build has none.
GgmlOracle::BufferType* repack_buffer_type(const GgmlOracle& oracle, GgmlOracle::Registry* registry,
                                           GgmlOracle::Device* device) {
  using ExtraBufferTypes = GgmlOracle::BufferType** (*)(GgmlOracle::Device*);
  const auto extra = reinterpret_cast<ExtraBufferTypes>(
      oracle.ggml_backend_reg_get_proc_address(registry, "ggml_backend_dev_get_extra_bufts"));
  if (extra == nullptr) return nullptr;
  for (GgmlOracle::BufferType** type = extra(device); type != nullptr && *type != nullptr; ++type) {
    if (std::string_view(oracle.ggml_backend_buft_name(*type)) == "CPU_REPACK") return *type;
  }
  return nullptr;
}

// Whether ggml runs this mat-vec with its weights in `buffer_type`: llama.cpp's check, made on a
// throwaway copy of the graph (ggml has no repacked kernel for some types and shapes, and uploading
// such a tensor into the repack buffer would crash).
bool repack_supported(const GgmlOracle& oracle, GgmlOracle::Device* device,
                      GgmlOracle::BufferType* buffer_type, GgmlType type, std::int64_t rows,
                      std::int64_t cols) {
  GgmlOracle::Context* probe = oracle.ggml_init({4 * oracle.ggml_tensor_overhead(), nullptr, true});
  if (probe == nullptr) throw StateError("ggml_init failed");
  GgmlOracle::Tensor* a = oracle.ggml_new_tensor_2d(probe, static_cast<int>(type), cols, rows);
  GgmlOracle::Buffer* buffer = oracle.ggml_backend_alloc_ctx_tensors_from_buft(probe, buffer_type);
  GgmlOracle::Tensor* b = oracle.ggml_new_tensor_1d(probe, static_cast<int>(GgmlType::F32), cols);
  GgmlOracle::Tensor* c = oracle.ggml_mul_mat(probe, a, b);
  const bool supported = buffer != nullptr && oracle.ggml_backend_dev_supports_op(device, c);
  if (buffer != nullptr) oracle.ggml_backend_buffer_free(buffer);
  oracle.ggml_free(probe);
  return supported;
}

}  // namespace

std::vector<std::string> GgmlOracle::cpu_variant_preference(const CpuFeatures& f) {
  std::vector<std::string> variants;
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl;
  // zen4 is also built for BF16, icelake for VNNI; both use AVX-512 BW/VL/DQ. sapphirerapids adds
  // AMX (and VBMI, which ggml_backend_score checks), as llama.cpp picks on such a CPU; alderlake is
  // AVX2 with AVX-VNNI. Best first: the first that loads with a nonzero score is used.
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  if (avx512 && f.avx512vnni && f.avx512bf16 && f.amx_tile && f.amx_int8) variants.emplace_back("sapphirerapids");
  if (avx512 && f.avx512vnni && f.avx512bf16) variants.emplace_back("zen4");
  if (avx512 && f.avx512vnni) variants.emplace_back("icelake");
  if (avx512) variants.emplace_back("skylakex");
  if (avx2 && f.avxvnni) variants.emplace_back("alderlake");
  if (avx2) variants.emplace_back("haswell");
  variants.emplace_back("x64");
  return variants;
}

const GgmlOracle& GgmlOracle::load() {
  // A failed load is remembered: every test then fails with the same message, quickly.
  static std::once_flag once;
  static std::unique_ptr<GgmlOracle> instance;
  static std::string error;
  std::call_once(once, [] {
    auto oracle = std::unique_ptr<GgmlOracle>(new GgmlOracle());
    try {
      oracle->open();
      instance = std::move(oracle);
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  if (!instance) throw IoError(error);
  return *instance;
}

GgmlOracle::~GgmlOracle() {
  // The libraries stay loaded: ggml keeps global state (CPU feature tables, thread-local buffers)
  // that may outlive this object during static destruction.
}

void GgmlOracle::open() {
  directory_ = oracle_directory();
  base_path_ = (std::filesystem::path(directory_) / "libggml-base.so").string();
  if (!std::filesystem::exists(base_path_)) fail(fmt::format("{} not found", base_path_));
  base_handle_ = dlopen(base_path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (base_handle_ == nullptr) fail(fmt::format("dlopen {} failed: {}", base_path_, dlerror()));

  std::vector<std::string> candidates;
  if (const char* forced = std::getenv("BRICK_ORACLE_CPU"); forced != nullptr && *forced != '\0') {
    candidates.emplace_back(forced);
  } else {
    candidates = cpu_variant_preference(cpu_features());
  }
  std::string rejected;
  for (const std::string& variant : candidates) {
    const std::string path =
        (std::filesystem::path(directory_) / fmt::format("libggml-cpu-{}.so", variant)).string();
    if (!std::filesystem::exists(path)) {
      rejected += fmt::format(" {} (missing)", variant);
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      rejected += fmt::format(" {} (dlopen: {})", variant, dlerror());
      continue;
    }
    // ggml's own check of the variant's build flags against this CPU: 0 means it cannot run here.
    int (*score)() = nullptr;
    resolve(handle, path.c_str(), "ggml_backend_score", score);
    if (score() == 0) {
      rejected += fmt::format(" {} (ggml_backend_score 0 on this CPU)", variant);
      dlclose(handle);
      continue;
    }
    cpu_handle_ = handle;
    cpu_path_ = path;
    cpu_variant_ = variant;
    break;
  }
  if (cpu_handle_ == nullptr)
    fail(fmt::format("no usable libggml-cpu variant in {}:{}", directory_, rejected));

  const char* base = base_path_.c_str();
  const char* cpu = cpu_path_.c_str();
  const char* (*version)() = nullptr;
  const char* (*commit)() = nullptr;
  resolve(base_handle_, base, "ggml_version", version);
  resolve(base_handle_, base, "ggml_commit", commit);
  version_ = version();
  commit_ = commit();

  resolve(base_handle_, base, "quantize_row_q4_K_ref", quantize_row_q4_K_ref);
  resolve(base_handle_, base, "quantize_row_q5_K_ref", quantize_row_q5_K_ref);
  resolve(base_handle_, base, "quantize_row_q6_K_ref", quantize_row_q6_K_ref);
  resolve(base_handle_, base, "quantize_row_q8_K_ref", quantize_row_q8_K_ref);
  resolve(base_handle_, base, "quantize_row_q8_0_ref", quantize_row_q8_0_ref);
  resolve(base_handle_, base, "dequantize_row_q4_K", dequantize_row_q4_K);
  resolve(base_handle_, base, "dequantize_row_q8_0", dequantize_row_q8_0);
  resolve(base_handle_, base, "dequantize_row_q5_K", dequantize_row_q5_K);
  resolve(base_handle_, base, "dequantize_row_q6_K", dequantize_row_q6_K);
  resolve(base_handle_, base, "dequantize_row_q8_K", dequantize_row_q8_K);
  resolve(base_handle_, base, "ggml_quantize_chunk", ggml_quantize_chunk);
  resolve(base_handle_, base, "ggml_fp16_to_fp32_row", ggml_fp16_to_fp32_row);
  resolve(base_handle_, base, "ggml_fp32_to_fp16_row", ggml_fp32_to_fp16_row);
  resolve(base_handle_, base, "ggml_bf16_to_fp32_row", ggml_bf16_to_fp32_row);
  resolve(base_handle_, base, "ggml_fp32_to_bf16_row_ref", ggml_fp32_to_bf16_row_ref);
  resolve(base_handle_, base, "ggml_init", ggml_init);
  resolve(base_handle_, base, "ggml_free", ggml_free);
  resolve(base_handle_, base, "ggml_tensor_overhead", ggml_tensor_overhead);
  resolve(base_handle_, base, "ggml_graph_overhead", ggml_graph_overhead);
  resolve(base_handle_, base, "ggml_row_size", ggml_row_size);
  resolve(base_handle_, base, "ggml_nbytes", ggml_nbytes);
  resolve(base_handle_, base, "ggml_new_tensor_1d", ggml_new_tensor_1d);
  resolve(base_handle_, base, "ggml_new_tensor_2d", ggml_new_tensor_2d);
  resolve(base_handle_, base, "ggml_get_data", ggml_get_data);
  resolve(base_handle_, base, "ggml_mul_mat", ggml_mul_mat);
  resolve(base_handle_, base, "ggml_new_graph", ggml_new_graph);
  resolve(base_handle_, base, "ggml_build_forward_expand", ggml_build_forward_expand);
  resolve(base_handle_, base, "ggml_threadpool_params_init", ggml_threadpool_params_init);
  resolve(base_handle_, base, "ggml_backend_alloc_ctx_tensors_from_buft",
          ggml_backend_alloc_ctx_tensors_from_buft);
  resolve(base_handle_, base, "ggml_backend_buffer_free", ggml_backend_buffer_free);
  resolve(base_handle_, base, "ggml_backend_buft_name", ggml_backend_buft_name);
  resolve(base_handle_, base, "ggml_backend_tensor_set", ggml_backend_tensor_set);
  resolve(base_handle_, base, "ggml_backend_graph_compute", ggml_backend_graph_compute);
  resolve(base_handle_, base, "ggml_backend_free", ggml_backend_free);
  resolve(base_handle_, base, "ggml_backend_reg_dev_get", ggml_backend_reg_dev_get);
  resolve(base_handle_, base, "ggml_backend_reg_get_proc_address",
          ggml_backend_reg_get_proc_address);
  resolve(base_handle_, base, "ggml_backend_dev_buffer_type", ggml_backend_dev_buffer_type);
  resolve(base_handle_, base, "ggml_backend_dev_supports_op", ggml_backend_dev_supports_op);

  void (*cpu_init)() = nullptr;
  resolve(cpu_handle_, cpu, "ggml_cpu_init", cpu_init);
  cpu_init();  // fills ggml's fp16 tables; must run before any CPU-library kernel
  resolve(cpu_handle_, cpu, "quantize_row_q8_K", quantize_row_q8_K);
  resolve(cpu_handle_, cpu, "quantize_row_q8_0", quantize_row_q8_0);
  resolve(cpu_handle_, cpu, "ggml_cpu_fp32_to_fp16", ggml_cpu_fp32_to_fp16);
  resolve(cpu_handle_, cpu, "ggml_cpu_fp32_to_bf16", ggml_cpu_fp32_to_bf16);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q4_K_q8_K", ggml_vec_dot_q4_K_q8_K);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q4_K_q8_K_generic", ggml_vec_dot_q4_K_q8_K_generic);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q8_0_q8_0", ggml_vec_dot_q8_0_q8_0);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q8_0_q8_0_generic", ggml_vec_dot_q8_0_q8_0_generic);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_f16", ggml_vec_dot_f16);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_bf16", ggml_vec_dot_bf16);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q5_K_q8_K", ggml_vec_dot_q5_K_q8_K);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q6_K_q8_K", ggml_vec_dot_q6_K_q8_K);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q5_K_q8_K_generic", ggml_vec_dot_q5_K_q8_K_generic);
  resolve(cpu_handle_, cpu, "ggml_vec_dot_q6_K_q8_K_generic", ggml_vec_dot_q6_K_q8_K_generic);
  resolve(cpu_handle_, cpu, "ggml_graph_compute_with_ctx", ggml_graph_compute_with_ctx);
  resolve(cpu_handle_, cpu, "ggml_threadpool_new", ggml_threadpool_new);
  resolve(cpu_handle_, cpu, "ggml_threadpool_free", ggml_threadpool_free);
  resolve(cpu_handle_, cpu, "ggml_graph_plan", ggml_graph_plan);
  resolve(cpu_handle_, cpu, "ggml_graph_compute", ggml_graph_compute);
  resolve(cpu_handle_, cpu, "ggml_backend_cpu_init", ggml_backend_cpu_init);
  resolve(cpu_handle_, cpu, "ggml_backend_cpu_set_n_threads", ggml_backend_cpu_set_n_threads);
  resolve(cpu_handle_, cpu, "ggml_backend_cpu_reg", ggml_backend_cpu_reg);

  // The type ids and block sizes this header assumes, checked against the library.
  std::size_t (*type_size)(int) = nullptr;
  resolve(base_handle_, base, "ggml_type_size", type_size);
  resolve(base_handle_, base, "ggml_blck_size", ggml_blck_size);
  const struct {
    GgmlType type;
    std::size_t bytes;
    std::int64_t values;
  } expected[] = {{GgmlType::F32, 4, 1},
                  {GgmlType::F16, sizeof(quant::fp16_t), 1},
                  {GgmlType::BF16, sizeof(quant::bf16_t), 1},
                  {GgmlType::Q8_0, sizeof(quant::BlockQ80), quant::kQ80BlockSize},
                  {GgmlType::Q4_K, sizeof(quant::BlockQ4K), quant::kBlockSize},
                  {GgmlType::Q5_K, sizeof(quant::BlockQ5K), quant::kBlockSize},
                  {GgmlType::Q6_K, sizeof(quant::BlockQ6K), quant::kBlockSize},
                  {GgmlType::Q8_K, sizeof(quant::BlockQ8K), quant::kBlockSize}};
  for (const auto& e : expected) {
    const int id = static_cast<int>(e.type);
    if (type_size(id) != e.bytes || ggml_blck_size(id) != e.values) {
      fail(fmt::format("{} reports type {} as {} bytes per {} values, expected {} per {}", base, id,
                       type_size(id), ggml_blck_size(id), e.bytes, e.values));
    }
  }
}

std::string GgmlOracle::describe() const {
  return fmt::format("ggml {} ({}), {}", version_, commit_, cpu_path_);
}

void GgmlOracle::quantize_q4k_ref(std::span<const float> x, std::span<quant::BlockQ4K> out) const {
  require_blocks("quantize_row_q4_K_ref", x.size(), out.size());
  quantize_row_q4_K_ref(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::quantize_q8_0_ref(std::span<const float> x, std::span<quant::BlockQ80> out) const {
  require_same_size("quantize_row_q8_0_ref", x.size(), quant::kQ80BlockSize * out.size());
  quantize_row_q8_0_ref(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::quantize_q8_0(std::span<const float> x, std::span<quant::BlockQ80> out) const {
  require_same_size("quantize_row_q8_0", x.size(), quant::kQ80BlockSize * out.size());
  quantize_row_q8_0(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::cpu_fp32_to_fp16(std::span<const float> x, std::span<quant::fp16_t> out) const {
  require_same_size("ggml_cpu_fp32_to_fp16", x.size(), out.size());
  ggml_cpu_fp32_to_fp16(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::cpu_fp32_to_bf16(std::span<const float> x, std::span<quant::bf16_t> out) const {
  require_same_size("ggml_cpu_fp32_to_bf16", x.size(), out.size());
  ggml_cpu_fp32_to_bf16(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

std::vector<std::byte> GgmlOracle::quantize_chunk(GgmlType type, std::span<const float> x,
                                                  std::size_t n_per_row) const {
  const auto n = static_cast<std::int64_t>(n_per_row);
  if (n_per_row == 0 || x.size() % n_per_row != 0) {
    throw InvalidArgument(fmt::format("ggml oracle ggml_quantize_chunk: bad row length {}", n_per_row));
  }
  const auto rows = static_cast<std::int64_t>(x.size() / n_per_row);
  std::vector<std::byte> out(ggml_row_size(static_cast<int>(type), n) * static_cast<std::size_t>(rows));
  ggml_quantize_chunk(static_cast<int>(type), x.data(), out.data(), 0, rows, n, nullptr);
  return out;
}

void GgmlOracle::quantize_q5k_ref(std::span<const float> x, std::span<quant::BlockQ5K> out) const {
  require_blocks("quantize_row_q5_K_ref", x.size(), out.size());
  quantize_row_q5_K_ref(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::quantize_q6k_ref(std::span<const float> x, std::span<quant::BlockQ6K> out) const {
  require_blocks("quantize_row_q6_K_ref", x.size(), out.size());
  quantize_row_q6_K_ref(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::quantize_q8k_ref(std::span<const float> x, std::span<quant::BlockQ8K> out) const {
  require_blocks("quantize_row_q8_K_ref", x.size(), out.size());
  quantize_row_q8_K_ref(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::quantize_q8k(std::span<const float> x, std::span<quant::BlockQ8K> out) const {
  require_blocks("quantize_row_q8_K", x.size(), out.size());
  quantize_row_q8_K(x.data(), out.data(), static_cast<std::int64_t>(x.size()));
}

void GgmlOracle::quantize_chunk_q5k(std::span<const float> x, std::size_t n_per_row,
                                    std::span<quant::BlockQ5K> out) const {
  require_blocks("ggml_quantize_chunk(Q5_K)", x.size(), out.size());
  if (n_per_row == 0 || x.size() % n_per_row != 0 || n_per_row % quant::kBlockSize != 0) {
    throw InvalidArgument(
        fmt::format("ggml oracle ggml_quantize_chunk: bad row length {}", n_per_row));
  }
  ggml_quantize_chunk(static_cast<int>(GgmlType::Q5_K), x.data(), out.data(), 0,
                      static_cast<std::int64_t>(x.size() / n_per_row),
                      static_cast<std::int64_t>(n_per_row), nullptr);
}

void GgmlOracle::quantize_chunk_q6k(std::span<const float> x, std::size_t n_per_row,
                                    std::span<quant::BlockQ6K> out) const {
  require_blocks("ggml_quantize_chunk(Q6_K)", x.size(), out.size());
  if (n_per_row == 0 || x.size() % n_per_row != 0 || n_per_row % quant::kBlockSize != 0) {
    throw InvalidArgument(
        fmt::format("ggml oracle ggml_quantize_chunk: bad row length {}", n_per_row));
  }
  ggml_quantize_chunk(static_cast<int>(GgmlType::Q6_K), x.data(), out.data(), 0,
                      static_cast<std::int64_t>(x.size() / n_per_row),
                      static_cast<std::int64_t>(n_per_row), nullptr);
}

void GgmlOracle::dequantize_q4k(std::span<const quant::BlockQ4K> in, std::span<float> out) const {
  require_blocks("dequantize_row_q4_K", out.size(), in.size());
  dequantize_row_q4_K(in.data(), out.data(), static_cast<std::int64_t>(out.size()));
}

void GgmlOracle::dequantize_q8_0(std::span<const quant::BlockQ80> in, std::span<float> out) const {
  require_same_size("dequantize_row_q8_0", quant::kQ80BlockSize * in.size(), out.size());
  dequantize_row_q8_0(in.data(), out.data(), static_cast<std::int64_t>(out.size()));
}

void GgmlOracle::dequantize_q5k(std::span<const quant::BlockQ5K> in, std::span<float> out) const {
  require_blocks("dequantize_row_q5_K", out.size(), in.size());
  dequantize_row_q5_K(in.data(), out.data(), static_cast<std::int64_t>(out.size()));
}

void GgmlOracle::dequantize_q6k(std::span<const quant::BlockQ6K> in, std::span<float> out) const {
  require_blocks("dequantize_row_q6_K", out.size(), in.size());
  dequantize_row_q6_K(in.data(), out.data(), static_cast<std::int64_t>(out.size()));
}

void GgmlOracle::dequantize_q8k(std::span<const quant::BlockQ8K> in, std::span<float> out) const {
  require_blocks("dequantize_row_q8_K", out.size(), in.size());
  dequantize_row_q8_K(in.data(), out.data(), static_cast<std::int64_t>(out.size()));
}

float GgmlOracle::vec_dot_q4k_q8k(std::span<const quant::BlockQ4K> w, std::span<const quant::BlockQ8K> x) const {
  return vec_dot(ggml_vec_dot_q4_K_q8_K, "ggml_vec_dot_q4_K_q8_K", w, x);
}

float GgmlOracle::vec_dot_q4k_q8k_generic(std::span<const quant::BlockQ4K> w,
                                          std::span<const quant::BlockQ8K> x) const {
  return vec_dot(ggml_vec_dot_q4_K_q8_K_generic, "ggml_vec_dot_q4_K_q8_K_generic", w, x);
}

float GgmlOracle::vec_dot_q8_0_q8_0(std::span<const quant::BlockQ80> w, std::span<const quant::BlockQ80> x) const {
  return vec_dot(ggml_vec_dot_q8_0_q8_0, "ggml_vec_dot_q8_0_q8_0", w, x, quant::kQ80BlockSize);
}

float GgmlOracle::vec_dot_q8_0_q8_0_generic(std::span<const quant::BlockQ80> w,
                                            std::span<const quant::BlockQ80> x) const {
  return vec_dot(ggml_vec_dot_q8_0_q8_0_generic, "ggml_vec_dot_q8_0_q8_0_generic", w, x, quant::kQ80BlockSize);
}

float GgmlOracle::vec_dot_f16(std::span<const quant::fp16_t> w, std::span<const quant::fp16_t> x) const {
  return vec_dot(ggml_vec_dot_f16, "ggml_vec_dot_f16", w, x, 1);
}

float GgmlOracle::vec_dot_bf16(std::span<const quant::bf16_t> w, std::span<const quant::bf16_t> x) const {
  return vec_dot(ggml_vec_dot_bf16, "ggml_vec_dot_bf16", w, x, 1);
}

float GgmlOracle::vec_dot_q5k_q8k(std::span<const quant::BlockQ5K> w,
                                  std::span<const quant::BlockQ8K> x) const {
  return vec_dot(ggml_vec_dot_q5_K_q8_K, "ggml_vec_dot_q5_K_q8_K", w, x);
}

float GgmlOracle::vec_dot_q6k_q8k(std::span<const quant::BlockQ6K> w,
                                  std::span<const quant::BlockQ8K> x) const {
  return vec_dot(ggml_vec_dot_q6_K_q8_K, "ggml_vec_dot_q6_K_q8_K", w, x);
}

float GgmlOracle::vec_dot_q5k_q8k_generic(std::span<const quant::BlockQ5K> w,
                                          std::span<const quant::BlockQ8K> x) const {
  return vec_dot(ggml_vec_dot_q5_K_q8_K_generic, "ggml_vec_dot_q5_K_q8_K_generic", w, x);
}

float GgmlOracle::vec_dot_q6k_q8k_generic(std::span<const quant::BlockQ6K> w,
                                          std::span<const quant::BlockQ8K> x) const {
  return vec_dot(ggml_vec_dot_q6_K_q8_K_generic, "ggml_vec_dot_q6_K_q8_K_generic", w, x);
}

GgmlMatVec::GgmlMatVec(const GgmlOracle& oracle, GgmlType type, std::size_t rows, std::size_t cols)
    : oracle_(oracle), rows_(rows) {
  if (type == GgmlType::Q8_K) throw InvalidArgument("GgmlMatVec: Q8_K is not a weight type");
  require_whole_blocks(oracle, "GgmlMatVec", type, rows, cols);
  const auto n_rows = static_cast<std::int64_t>(rows);
  const auto n_cols = static_cast<std::int64_t>(cols);
  const std::size_t weight_bytes = oracle.ggml_row_size(static_cast<int>(type), n_cols) * rows;
  // Tensors, the graph, and the work buffer ggml_graph_compute_with_ctx carves out of the context
  // (the input converted to the weights' activation type, at most 4 bytes a value, plus per-thread
  // padding).
  const std::size_t mem_size = weight_bytes + (2 * cols + rows) * sizeof(float) +
                               4 * oracle.ggml_tensor_overhead() + oracle.ggml_graph_overhead() + (1u << 20);
  context_ = oracle.ggml_init({mem_size, nullptr, false});
  if (context_ == nullptr) throw StateError("GgmlMatVec: ggml_init failed");
  GgmlOracle::Tensor* a =
      oracle.ggml_new_tensor_2d(context_, static_cast<int>(type), n_cols, n_rows);
  GgmlOracle::Tensor* b =
      oracle.ggml_new_tensor_1d(context_, static_cast<int>(GgmlType::F32), n_cols);
  GgmlOracle::Tensor* c = oracle.ggml_mul_mat(context_, a, b);
  graph_ = oracle.ggml_new_graph(context_);
  oracle.ggml_build_forward_expand(graph_, c);
  weights_ = {static_cast<std::byte*>(oracle.ggml_get_data(a)), oracle.ggml_nbytes(a)};
  input_ = {static_cast<float*>(oracle.ggml_get_data(b)), cols};
  output_ = {static_cast<float*>(oracle.ggml_get_data(c)), rows};
}

GgmlMatVec::~GgmlMatVec() {
  if (pool_ != nullptr) oracle_.ggml_threadpool_free(pool_);
  oracle_.ggml_free(context_);
}

void GgmlMatVec::compute(int n_threads) {
  const int status = oracle_.ggml_graph_compute_with_ctx(context_, graph_, n_threads);
  if (status != 0) throw StateError(fmt::format("ggml_graph_compute_with_ctx returned {}", status));
}

void GgmlMatVec::compute_pooled(int n_threads) {
  if (pool_ == nullptr || pool_threads_ != n_threads) {
    if (pool_ != nullptr) oracle_.ggml_threadpool_free(pool_);
    // struct ggml_threadpool_params (a 512-entry CPU mask and a few scalars) stays opaque here.
    alignas(64) unsigned char params[2048] = {};
    oracle_.ggml_threadpool_params_init(params, n_threads);
    pool_ = oracle_.ggml_threadpool_new(params);
    if (pool_ == nullptr) throw StateError("ggml_threadpool_new failed");
    pool_threads_ = n_threads;
  }
  GgmlOracle::ComputePlan plan = oracle_.ggml_graph_plan(graph_, n_threads, pool_);
  if (work_.size() < plan.work_size) work_.resize(plan.work_size);
  plan.work_data = work_.data();
  const int status = oracle_.ggml_graph_compute(graph_, &plan);
  if (status != 0) throw StateError(fmt::format("ggml_graph_compute returned {}", status));
}

GgmlBackendMatVec::GgmlBackendMatVec(const GgmlOracle& oracle, GgmlType type, std::size_t rows,
                                     std::size_t cols, std::span<const std::byte> weights,
                                     bool repack, std::size_t tokens)
    : oracle_(oracle) {
  if (tokens == 0) throw InvalidArgument("GgmlBackendMatVec: 0 tokens");
  if (type == GgmlType::Q8_K) throw InvalidArgument("GgmlBackendMatVec: Q8_K is not a weight type");
  require_whole_blocks(oracle, "GgmlBackendMatVec", type, rows, cols);
  const auto n_rows = static_cast<std::int64_t>(rows);
  const auto n_cols = static_cast<std::int64_t>(cols);
  if (weights.size() != oracle.ggml_row_size(static_cast<int>(type), n_cols) * rows) {
    throw InvalidArgument(fmt::format("GgmlBackendMatVec: {} weight bytes for a {}x{} matrix",
                                      weights.size(), rows, cols));
  }
  try {
    GgmlOracle::Registry* registry = oracle.ggml_backend_cpu_reg();
    GgmlOracle::Device* device = oracle.ggml_backend_reg_dev_get(registry, 0);
    GgmlOracle::BufferType* host = oracle.ggml_backend_dev_buffer_type(device);
    GgmlOracle::BufferType* weight_type = host;
    if (repack) {
      GgmlOracle::BufferType* candidate = repack_buffer_type(oracle, registry, device);
      if (candidate != nullptr &&
          repack_supported(oracle, device, candidate, type, n_rows, n_cols)) {
        weight_type = candidate;
      }
    }
    weight_buffer_type_ = oracle.ggml_backend_buft_name(weight_type);

    backend_ = oracle.ggml_backend_cpu_init();
    weight_context_ = oracle.ggml_init({2 * oracle.ggml_tensor_overhead(), nullptr, true});
    compute_context_ = oracle.ggml_init(
        {4 * oracle.ggml_tensor_overhead() + oracle.ggml_graph_overhead(), nullptr, true});
    if (backend_ == nullptr || weight_context_ == nullptr || compute_context_ == nullptr) {
      throw StateError("GgmlBackendMatVec: ggml_backend_cpu_init or ggml_init failed");
    }
    GgmlOracle::Tensor* a =
        oracle.ggml_new_tensor_2d(weight_context_, static_cast<int>(type), n_cols, n_rows);
    weight_buffer_ = oracle.ggml_backend_alloc_ctx_tensors_from_buft(weight_context_, weight_type);
    if (weight_buffer_ == nullptr)
      throw StateError("GgmlBackendMatVec: weight buffer allocation failed");
    oracle.ggml_backend_tensor_set(a, weights.data(), 0, weights.size());
    repacked_ = std::memcmp(oracle.ggml_get_data(a), weights.data(), weights.size()) != 0;

    GgmlOracle::Tensor* b = oracle.ggml_new_tensor_2d(compute_context_, static_cast<int>(GgmlType::F32), n_cols,
                                                      static_cast<std::int64_t>(tokens));
    GgmlOracle::Tensor* c = oracle.ggml_mul_mat(compute_context_, a, b);
    graph_ = oracle.ggml_new_graph(compute_context_);
    oracle.ggml_build_forward_expand(graph_, c);
    compute_buffer_ = oracle.ggml_backend_alloc_ctx_tensors_from_buft(compute_context_, host);
    if (compute_buffer_ == nullptr) throw StateError("GgmlBackendMatVec: buffer allocation failed");
    input_ = {static_cast<float*>(oracle.ggml_get_data(b)), cols * tokens};
    output_ = {static_cast<float*>(oracle.ggml_get_data(c)), rows * tokens};
  } catch (...) {
    release();
    throw;
  }
}

GgmlBackendMatVec::~GgmlBackendMatVec() {
  release();
}

void GgmlBackendMatVec::release() noexcept {
  if (compute_buffer_ != nullptr) oracle_.ggml_backend_buffer_free(compute_buffer_);
  if (weight_buffer_ != nullptr) oracle_.ggml_backend_buffer_free(weight_buffer_);
  if (compute_context_ != nullptr) oracle_.ggml_free(compute_context_);
  if (weight_context_ != nullptr) oracle_.ggml_free(weight_context_);
  if (backend_ != nullptr) oracle_.ggml_backend_free(backend_);
}

void GgmlBackendMatVec::compute(int n_threads) {
  oracle_.ggml_backend_cpu_set_n_threads(backend_, n_threads);
  const int status = oracle_.ggml_backend_graph_compute(backend_, graph_);
  if (status != 0) throw StateError(fmt::format("ggml_backend_graph_compute returned {}", status));
}

}  // namespace brick::test
