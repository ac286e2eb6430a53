#include "support/llama_quantize.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "brick/core/error.hpp"
#include "support/ggml_oracle.hpp"

namespace brick::test {
namespace {

// struct llama_model_quantize_params starts with `int32_t nthread; enum llama_ftype ftype;` in
// every llama.cpp release; the rest of its fields (type overrides, flags, pointers) keep the
// defaults llama_model_quantize_default_params() fills in. The struct is returned through a hidden
// pointer (it is larger than two registers), so a buffer at least as large as the real struct
// receives it whatever fields a release appends.
struct QuantizeParams {
  std::int32_t nthread;
  std::int32_t ftype;
  unsigned char rest[504];
};

using DefaultParamsFn = QuantizeParams (*)();
using QuantizeFn = std::uint32_t (*)(const char* in, const char* out, const QuantizeParams* params);

struct Llama {
  DefaultParamsFn default_params = nullptr;
  QuantizeFn quantize = nullptr;
};

const Llama& llama() {
  static Llama library;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string path = GgmlOracle::load().directory() + "/libllama.v0.4.0.so";
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      throw IoError(fmt::format("cannot load {} ({}); install the oracle with ./scripts/setup",
                                path, dlerror()));
    }
    library.default_params =
        reinterpret_cast<DefaultParamsFn>(dlsym(handle, "llama_model_quantize_default_params"));
    library.quantize = reinterpret_cast<QuantizeFn>(dlsym(handle, "llama_model_quantize"));
    if (library.default_params == nullptr || library.quantize == nullptr) {
      throw IoError(fmt::format("{} does not export llama_model_quantize", path));
    }
  });
  return library;
}

}  // namespace

void llama_quantize(const std::filesystem::path& in, const std::filesystem::path& out, int ftype) {
  const Llama& l = llama();
  QuantizeParams params = l.default_params();
  params.nthread = 1;
  params.ftype = ftype;
  if (const std::uint32_t status = l.quantize(in.c_str(), out.c_str(), &params); status != 0) {
    throw std::runtime_error(fmt::format("llama_model_quantize({} -> {}, ftype {}) returned {}",
                                         in.string(), out.string(), ftype, status));
  }
}

}  // namespace brick::test
