#include "support/ggml_gguf.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/std.h>

#include <cstring>
#include <mutex>
#include <type_traits>
#include <variant>

#include "brick/core/error.hpp"
#include "support/ggml_oracle.hpp"

namespace brick::test {
namespace {

using gguf::Array;
using gguf::Bool;
using gguf::Value;

struct GgufContext;  // struct gguf_context
struct GgmlContext;  // struct ggml_context
struct GgmlTensor;   // struct ggml_tensor

struct GgufInitParams {  // struct gguf_init_params
  bool no_alloc;
  GgmlContext** ctx;
};

struct GgmlInitParams {  // struct ggml_init_params
  std::size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};

// enum gguf_type and enum ggml_type are passed as int, as the C ABI passes them.
struct Api {
  GgufContext* (*gguf_init_empty)() = nullptr;
  GgufContext* (*gguf_init_from_file)(const char* path, GgufInitParams params) = nullptr;
  GgufContext* (*gguf_init_from_buffer)(const void* data, std::size_t size,
                                        GgufInitParams params) = nullptr;
  void (*gguf_free)(GgufContext* ctx) = nullptr;
  const char* (*gguf_type_name)(int type) = nullptr;
  std::uint32_t (*gguf_get_version)(const GgufContext* ctx) = nullptr;
  std::size_t (*gguf_get_alignment)(const GgufContext* ctx) = nullptr;
  std::size_t (*gguf_get_data_offset)(const GgufContext* ctx) = nullptr;
  std::int64_t (*gguf_get_n_kv)(const GgufContext* ctx) = nullptr;
  const char* (*gguf_get_key)(const GgufContext* ctx, std::int64_t id) = nullptr;
  int (*gguf_get_kv_type)(const GgufContext* ctx, std::int64_t id) = nullptr;
  int (*gguf_get_arr_type)(const GgufContext* ctx, std::int64_t id) = nullptr;
  std::size_t (*gguf_get_arr_n)(const GgufContext* ctx, std::int64_t id) = nullptr;
  const void* (*gguf_get_arr_data)(const GgufContext* ctx, std::int64_t id) = nullptr;
  const char* (*gguf_get_arr_str)(const GgufContext* ctx, std::int64_t id, std::size_t i) = nullptr;
  const void* (*gguf_get_val_data)(const GgufContext* ctx, std::int64_t id) = nullptr;
  const char* (*gguf_get_val_str)(const GgufContext* ctx, std::int64_t id) = nullptr;
  std::int64_t (*gguf_get_n_tensors)(const GgufContext* ctx) = nullptr;
  const char* (*gguf_get_tensor_name)(const GgufContext* ctx, std::int64_t id) = nullptr;
  int (*gguf_get_tensor_type)(const GgufContext* ctx, std::int64_t id) = nullptr;
  const std::int64_t* (*gguf_get_tensor_ne)(const GgufContext* ctx, std::int64_t id) = nullptr;
  std::size_t (*gguf_get_tensor_offset)(const GgufContext* ctx, std::int64_t id) = nullptr;
  std::size_t (*gguf_get_tensor_size)(const GgufContext* ctx, std::int64_t id) = nullptr;
  void (*gguf_set_val_u8)(GgufContext* ctx, const char* key, std::uint8_t value) = nullptr;
  void (*gguf_set_val_i8)(GgufContext* ctx, const char* key, std::int8_t value) = nullptr;
  void (*gguf_set_val_u16)(GgufContext* ctx, const char* key, std::uint16_t value) = nullptr;
  void (*gguf_set_val_i16)(GgufContext* ctx, const char* key, std::int16_t value) = nullptr;
  void (*gguf_set_val_u32)(GgufContext* ctx, const char* key, std::uint32_t value) = nullptr;
  void (*gguf_set_val_i32)(GgufContext* ctx, const char* key, std::int32_t value) = nullptr;
  void (*gguf_set_val_f32)(GgufContext* ctx, const char* key, float value) = nullptr;
  void (*gguf_set_val_u64)(GgufContext* ctx, const char* key, std::uint64_t value) = nullptr;
  void (*gguf_set_val_i64)(GgufContext* ctx, const char* key, std::int64_t value) = nullptr;
  void (*gguf_set_val_f64)(GgufContext* ctx, const char* key, double value) = nullptr;
  void (*gguf_set_val_bool)(GgufContext* ctx, const char* key, bool value) = nullptr;
  void (*gguf_set_val_str)(GgufContext* ctx, const char* key, const char* value) = nullptr;
  void (*gguf_set_arr_data)(GgufContext* ctx, const char* key, int type, const void* data,
                            std::size_t n) = nullptr;
  void (*gguf_set_arr_str)(GgufContext* ctx, const char* key, const char** data,
                           std::size_t n) = nullptr;
  void (*gguf_add_tensor)(GgufContext* ctx, const GgmlTensor* tensor) = nullptr;
  bool (*gguf_write_to_file)(const GgufContext* ctx, const char* path, bool only_meta) = nullptr;

  GgmlContext* (*ggml_init)(GgmlInitParams params) = nullptr;
  void (*ggml_free)(GgmlContext* ctx) = nullptr;
  std::size_t (*ggml_tensor_overhead)() = nullptr;
  GgmlTensor* (*ggml_new_tensor)(GgmlContext* ctx, int type, int n_dims,
                                 const std::int64_t* ne) = nullptr;
  GgmlTensor* (*ggml_set_name)(GgmlTensor* tensor, const char* name) = nullptr;
  GgmlTensor* (*ggml_get_tensor)(GgmlContext* ctx, const char* name) = nullptr;
  void* (*ggml_get_data)(const GgmlTensor* tensor) = nullptr;
  std::size_t (*ggml_nbytes)(const GgmlTensor* tensor) = nullptr;
  // void ggml_log_set(ggml_log_callback, void* user_data), the callback being
  // void (*)(enum ggml_log_level, const char* text, void* user_data).
  void (*ggml_log_set)(void (*callback)(int level, const char* text, void* user_data),
                       void* user_data) = nullptr;
};

// Resolved once by GgmlGguf::load().
Api api;

// Frees a gguf or ggml context on every way out.
template <class Context, auto Free>
struct Owned {
  Context* context;
  ~Owned() {
    if (context != nullptr) (api.*Free)(context);
  }
};

// The GGUF type id of T: its index in Value::Storage.
template <class T, std::size_t I = 0>
constexpr int type_id() {
  if constexpr (std::is_same_v<T, std::variant_alternative_t<I, Value::Storage>>) {
    return static_cast<int>(I);
  } else {
    return type_id<T, I + 1>();
  }
}

// A value read from ggml: the scalar or array of element type `type` at `data` (arrays: `n`
// elements), T being each alternative of Value::Storage in turn.
template <std::size_t I = 0>
Value value_from_bytes(int type, const void* data, std::size_t n, bool array) {
  if constexpr (I < std::variant_size_v<Value::Storage>) {
    using T = std::variant_alternative_t<I, Value::Storage>;
    if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, Bool>) {
      if (type == static_cast<int>(I)) {
        std::vector<T> values(array ? n : 1);
        for (std::size_t i = 0; i < values.size(); ++i) {
          if constexpr (std::is_same_v<T, Bool>) {
            values[i].value = static_cast<const std::int8_t*>(data)[i] != 0;
          } else {
            std::memcpy(&values[i], static_cast<const std::byte*>(data) + i * sizeof(T), sizeof(T));
          }
        }
        if (array) return Array{std::move(values)};
        return values[0];
      }
    }
    return value_from_bytes<I + 1>(type, data, n, array);
  } else {
    throw StateError(
        fmt::format("ggml reported GGUF type {} where a number or bool was expected", type));
  }
}

void open_library() {
  const std::string& path = GgmlOracle::load().base_library_path();
  // Already loaded by the oracle: this takes another reference to the same library.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    throw IoError(fmt::format("ggml gguf: dlopen {} failed: {}", path, dlerror()));
  auto resolve = [&]<class Fn>(const char* symbol, Fn& out) {
    void* address = dlsym(handle, symbol);
    if (address == nullptr)
      throw IoError(fmt::format("ggml gguf: {} does not export {}", path, symbol));
    out = reinterpret_cast<Fn>(address);
  };
#define BRICK_RESOLVE(name) resolve(#name, api.name)
  BRICK_RESOLVE(gguf_init_empty);
  BRICK_RESOLVE(gguf_init_from_file);
  BRICK_RESOLVE(gguf_init_from_buffer);
  BRICK_RESOLVE(gguf_free);
  BRICK_RESOLVE(gguf_type_name);
  BRICK_RESOLVE(gguf_get_version);
  BRICK_RESOLVE(gguf_get_alignment);
  BRICK_RESOLVE(gguf_get_data_offset);
  BRICK_RESOLVE(gguf_get_n_kv);
  BRICK_RESOLVE(gguf_get_key);
  BRICK_RESOLVE(gguf_get_kv_type);
  BRICK_RESOLVE(gguf_get_arr_type);
  BRICK_RESOLVE(gguf_get_arr_n);
  BRICK_RESOLVE(gguf_get_arr_data);
  BRICK_RESOLVE(gguf_get_arr_str);
  BRICK_RESOLVE(gguf_get_val_data);
  BRICK_RESOLVE(gguf_get_val_str);
  BRICK_RESOLVE(gguf_get_n_tensors);
  BRICK_RESOLVE(gguf_get_tensor_name);
  BRICK_RESOLVE(gguf_get_tensor_type);
  BRICK_RESOLVE(gguf_get_tensor_ne);
  BRICK_RESOLVE(gguf_get_tensor_offset);
  BRICK_RESOLVE(gguf_get_tensor_size);
  BRICK_RESOLVE(gguf_set_val_u8);
  BRICK_RESOLVE(gguf_set_val_i8);
  BRICK_RESOLVE(gguf_set_val_u16);
  BRICK_RESOLVE(gguf_set_val_i16);
  BRICK_RESOLVE(gguf_set_val_u32);
  BRICK_RESOLVE(gguf_set_val_i32);
  BRICK_RESOLVE(gguf_set_val_f32);
  BRICK_RESOLVE(gguf_set_val_u64);
  BRICK_RESOLVE(gguf_set_val_i64);
  BRICK_RESOLVE(gguf_set_val_f64);
  BRICK_RESOLVE(gguf_set_val_bool);
  BRICK_RESOLVE(gguf_set_val_str);
  BRICK_RESOLVE(gguf_set_arr_data);
  BRICK_RESOLVE(gguf_set_arr_str);
  BRICK_RESOLVE(gguf_add_tensor);
  BRICK_RESOLVE(gguf_write_to_file);
  BRICK_RESOLVE(ggml_init);
  BRICK_RESOLVE(ggml_free);
  BRICK_RESOLVE(ggml_tensor_overhead);
  BRICK_RESOLVE(ggml_new_tensor);
  BRICK_RESOLVE(ggml_set_name);
  BRICK_RESOLVE(ggml_get_tensor);
  BRICK_RESOLVE(ggml_get_data);
  BRICK_RESOLVE(ggml_nbytes);
  BRICK_RESOLVE(ggml_log_set);
#undef BRICK_RESOLVE
  api.ggml_log_set([](int, const char*, void*) {}, nullptr);
}

void set_array(GgufContext* ctx, const std::string& key, const Array& array) {
  std::visit(
      [&]<class E>(const std::vector<E>& elements) {
        if constexpr (std::is_same_v<E, std::string>) {
          std::vector<const char*> texts;
          for (const std::string& text : elements) texts.push_back(text.c_str());
          api.gguf_set_arr_str(ctx, key.c_str(), texts.data(), texts.size());
        } else if constexpr (std::is_same_v<E, Bool>) {
          std::vector<std::int8_t> bytes;
          for (const Bool b : elements) bytes.push_back(b.value ? 1 : 0);
          api.gguf_set_arr_data(ctx, key.c_str(), type_id<Bool>(), bytes.data(), bytes.size());
        } else if constexpr (std::is_same_v<E, Array>) {
          throw InvalidArgument(
              fmt::format("ggml's gguf API cannot write key '{}': arrays of arrays", key));
        } else {
          api.gguf_set_arr_data(ctx, key.c_str(), type_id<E>(), elements.data(), elements.size());
        }
      },
      array.values);
}

void set_metadata(GgufContext* ctx, const gguf::Metadata& metadata) {
  for (const auto& entry : metadata.entries()) {
    const std::string& key = entry.first;  // not a structured binding: clang 14 cannot capture one
    const char* k = key.c_str();
    std::visit(
        [&]<class T>(const T& v) {
          if constexpr (std::is_same_v<T, std::uint8_t>)
            api.gguf_set_val_u8(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::int8_t>)
            api.gguf_set_val_i8(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::uint16_t>)
            api.gguf_set_val_u16(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::int16_t>)
            api.gguf_set_val_i16(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::uint32_t>)
            api.gguf_set_val_u32(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::int32_t>)
            api.gguf_set_val_i32(ctx, k, v);
          else if constexpr (std::is_same_v<T, float>)
            api.gguf_set_val_f32(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::uint64_t>)
            api.gguf_set_val_u64(ctx, k, v);
          else if constexpr (std::is_same_v<T, std::int64_t>)
            api.gguf_set_val_i64(ctx, k, v);
          else if constexpr (std::is_same_v<T, double>)
            api.gguf_set_val_f64(ctx, k, v);
          else if constexpr (std::is_same_v<T, Bool>)
            api.gguf_set_val_bool(ctx, k, v.value);
          else if constexpr (std::is_same_v<T, std::string>)
            api.gguf_set_val_str(ctx, k, v.c_str());
          else
            set_array(ctx, key, v);
        },
        entry.second.storage());
  }
}

GgmlGguf::File read_context(const GgufContext* ctx, GgmlContext* data) {
  GgmlGguf::File file;
  file.version = api.gguf_get_version(ctx);
  file.alignment = api.gguf_get_alignment(ctx);
  file.data_offset = api.gguf_get_data_offset(ctx);
  for (std::int64_t id = 0; id < api.gguf_get_n_kv(ctx); ++id) {
    const std::string key = api.gguf_get_key(ctx, id);
    const int type = api.gguf_get_kv_type(ctx, id);
    constexpr int kString = type_id<std::string>();
    if (type == type_id<Array>()) {
      const int element_type = api.gguf_get_arr_type(ctx, id);
      const std::size_t n = api.gguf_get_arr_n(ctx, id);
      if (element_type == kString) {
        std::vector<std::string> texts;
        for (std::size_t i = 0; i < n; ++i) texts.emplace_back(api.gguf_get_arr_str(ctx, id, i));
        file.metadata.set(key, Array{std::move(texts)});
      } else {
        file.metadata.set(key,
                          value_from_bytes(element_type, api.gguf_get_arr_data(ctx, id), n, true));
      }
    } else if (type == kString) {
      file.metadata.set(key, std::string(api.gguf_get_val_str(ctx, id)));
    } else {
      file.metadata.set(key, value_from_bytes(type, api.gguf_get_val_data(ctx, id), 1, false));
    }
  }
  for (std::int64_t id = 0; id < api.gguf_get_n_tensors(ctx); ++id) {
    GgmlGguf::Tensor tensor;
    tensor.info.name = api.gguf_get_tensor_name(ctx, id);
    tensor.info.type = static_cast<quant::TensorType>(api.gguf_get_tensor_type(ctx, id));
    const std::int64_t* ne = api.gguf_get_tensor_ne(ctx, id);
    for (std::size_t i = 0; i < gguf::kMaxDims; ++i)
      tensor.info.ne[i] = static_cast<std::uint64_t>(ne[i]);
    tensor.info.offset = api.gguf_get_tensor_offset(ctx, id);
    tensor.info.bytes = api.gguf_get_tensor_size(ctx, id);
    const GgmlTensor* loaded = api.ggml_get_tensor(data, tensor.info.name.c_str());
    if (loaded == nullptr)
      throw StateError(fmt::format("ggml loaded no tensor '{}'", tensor.info.name));
    const auto* first = static_cast<const std::byte*>(api.ggml_get_data(loaded));
    tensor.data.assign(first, first + api.ggml_nbytes(loaded));
    file.tensors.push_back(std::move(tensor));
  }
  return file;
}

}  // namespace

const GgmlGguf& GgmlGguf::load() {
  // A failed load is remembered: every test then fails with the same message, quickly.
  static std::once_flag once;
  static std::string error;
  static const GgmlGguf instance;
  std::call_once(once, [] {
    try {
      open_library();
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  if (!error.empty()) throw IoError(error);
  return instance;
}

std::string GgmlGguf::type_name(gguf::ValueType type) const {
  const char* name = api.gguf_type_name(static_cast<int>(type));
  return name == nullptr ? "" : name;
}

void GgmlGguf::write(const std::filesystem::path& path, const gguf::Metadata& metadata,
                     std::span<const Tensor> tensors) const {
  Owned<GgufContext, &Api::gguf_free> gguf{api.gguf_init_empty()};
  set_metadata(gguf.context, metadata);
  std::size_t bytes = (tensors.size() + 1) * api.ggml_tensor_overhead();
  for (const Tensor& tensor : tensors) bytes += tensor.data.size() + 64;
  Owned<GgmlContext, &Api::ggml_free> ggml{api.ggml_init({bytes, nullptr, false})};
  if (ggml.context == nullptr) throw StateError("ggml_init failed");
  for (const Tensor& tensor : tensors) {
    std::int64_t ne[gguf::kMaxDims];
    for (std::size_t i = 0; i < gguf::kMaxDims; ++i)
      ne[i] = static_cast<std::int64_t>(tensor.info.ne[i]);
    GgmlTensor* t =
        api.ggml_new_tensor(ggml.context, static_cast<int>(tensor.info.type), gguf::kMaxDims, ne);
    if (t == nullptr || api.ggml_nbytes(t) != tensor.data.size()) {
      throw StateError(fmt::format("ggml tensor '{}' does not hold {} bytes", tensor.info.name,
                                   tensor.data.size()));
    }
    api.ggml_set_name(t, tensor.info.name.c_str());
    std::memcpy(api.ggml_get_data(t), tensor.data.data(), tensor.data.size());
    api.gguf_add_tensor(gguf.context, t);
  }
  if (!api.gguf_write_to_file(gguf.context, path.c_str(), false)) {
    throw StateError(fmt::format("gguf_write_to_file {} failed", path));
  }
}

std::optional<GgmlGguf::File> GgmlGguf::read(const std::filesystem::path& path) const {
  GgmlContext* data = nullptr;
  Owned<GgufContext, &Api::gguf_free> gguf{api.gguf_init_from_file(path.c_str(), {false, &data})};
  Owned<GgmlContext, &Api::ggml_free> ggml{data};
  if (gguf.context == nullptr) return std::nullopt;
  return read_context(gguf.context, ggml.context);
}

bool GgmlGguf::accepts(std::span<const std::byte> bytes) const {
  Owned<GgufContext, &Api::gguf_free> gguf{
      api.gguf_init_from_buffer(bytes.data(), bytes.size(), {true, nullptr})};
  return gguf.context != nullptr;
}

}  // namespace brick::test
