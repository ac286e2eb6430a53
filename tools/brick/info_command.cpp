// brick info: the CPU report, or with a GGUF file its architecture, metadata and tensors.
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "brick/core/backend.hpp"
#include "brick/core/cpu_features.hpp"
#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/tensor_type.hpp"
#include "brick/runtime/cpu_topology.hpp"
#include "brick/runtime/simd_config/amx_support.hpp"
#include "commands.hpp"

namespace brick::cli {
namespace {

constexpr std::size_t kShownElements = 8;  // array elements shown before "..."

struct InfoOptions {
  std::string model;
  bool json = false;
};

void print_cpu() {
  const CpuFeatures& cpu = cpu_features();
  fmt::print("cpu        {} ({}), {} usable CPUs on {} physical cores\n",
             cpu.brand.empty() ? "unknown" : cpu.brand, cpu.vendor, usable_cpus(),
             physical_cores());
  fmt::print("features   {}\n", describe(cpu));
  if (const std::string detected = describe(detect_cpu_features()); detected != describe(cpu)) {
    fmt::print("detected   {} (BRICK_CPU_DISABLE turns some off for the whole process)\n", detected);
  }
  fmt::print("backends  ");
  for (Backend b : kConcreteBackends) {
    const auto missing = missing_feature(b, cpu);
    fmt::print(" {}={}", name(b), missing ? fmt::format("no (needs {})", *missing) : "yes");
  }
  fmt::print("\namx        {}\n", describe(amx_support()));
  const Backend selected = resolve(Backend::Auto);
  fmt::print("selected   {} (BRICK_BACKEND forces one for the whole process)\n", name(selected));
  fmt::print("kernels    dot, axpy, add, rms_norm, softmax, silu, swiglu, rope, x to q8_K / q8_0 / f16 / "
             "bf16: {}\n",
             name(selected));
  // ggml numbers its types below 64; every type Brick computes with, in ggml's order.
  fmt::print("matvec     (and fused QKV / gate-up) by weight type:");
  const char* separator = " ";
  for (std::uint32_t id = 0; id < 64; ++id) {
    const auto traits = quant::tensor_type_traits(id);
    if (!traits || !quant::is_computable(traits->type)) continue;
    fmt::print("{}{} {}", separator, traits->name, quant::dot_kernel_name(traits->type, selected));
    separator = ", ";
  }
  fmt::print("\n");
}

std::string human_bytes(std::uint64_t bytes) {
  if (bytes >= 1'000'000'000) return fmt::format("{:.2f} GB", static_cast<double>(bytes) / 1e9);
  if (bytes >= 1'000'000) return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
  if (bytes >= 1'000) return fmt::format("{:.1f} kB", static_cast<double>(bytes) / 1e3);
  return fmt::format("{} B", bytes);
}

std::string shape(const gguf::TensorInfo& t) {
  std::string out;
  for (std::uint32_t i = 0; i < t.n_dims; ++i) out += fmt::format("{}{}", i ? " x " : "", t.ne[i]);
  return out;
}

nlohmann::json to_json(const gguf::Value& value);

nlohmann::json to_json(const gguf::Array& array) {
  nlohmann::json head = nlohmann::json::array();
  std::visit(
      [&](const auto& values) {
        for (std::size_t i = 0; i < values.size() && i < kShownElements; ++i)
          head.push_back(to_json(gguf::Value(values[i])));
      },
      array.values);
  return {{"type", "array"},
          {"element_type", name(array.element_type())},
          {"length", array.size()},
          {"head", head},
          {"abridged", array.size() > kShownElements}};
}

nlohmann::json to_json(const gguf::Value& value) {
  return std::visit(
      [](const auto& v) -> nlohmann::json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, gguf::Bool>) {
          return v.value;
        } else if constexpr (std::is_same_v<T, gguf::Array>) {
          return to_json(v);
        } else {
          return v;
        }
      },
      value.storage());
}

struct TypeTotal {
  std::size_t tensors = 0;
  std::uint64_t bytes = 0;
};

std::map<std::string, TypeTotal> totals_by_type(const gguf::GgufFile& file) {
  std::map<std::string, TypeTotal> totals;
  for (const gguf::TensorInfo& t : file.tensors()) {
    TypeTotal& total = totals[std::string(quant::name(t.type))];
    ++total.tensors;
    total.bytes += t.bytes;
  }
  return totals;
}

std::optional<model::LlamaConfig> try_config(const gguf::GgufFile& file, std::string& problem) {
  try {
    return model::llama_config(file);
  } catch (const Error& e) {
    problem = e.what();
    return std::nullopt;
  }
}

void print_model_text(const gguf::GgufFile& file) {
  fmt::print(
      "file       {}: GGUF v{}, {}, {} tensors, {} metadata keys, alignment {}, data at byte {}\n",
      file.name(), file.version(), human_bytes(file.file_size()), file.tensors().size(),
      file.metadata().size(), file.alignment(), file.data_offset());
  std::string problem;
  if (const auto c = try_config(file, problem)) {
    fmt::print(
        "model      llama: {} layers, embd {}, {} heads ({} kv, head size {}), ffn {}, vocab {}, "
        "context {}\n",
        c->n_layer, c->n_embd, c->n_head, c->n_head_kv, c->head_dim(), c->n_ff, c->n_vocab,
        c->n_ctx_train);
    fmt::print("           rope base {:g} over {} dims, rms eps {:g}, output {}\n",
               c->rope_freq_base, c->n_rot, c->rms_eps,
               file.find_tensor("output.weight") ? "separate" : "tied to token_embd");
  } else {
    fmt::print("model      not runnable by Brick: {}\n", problem);
  }
  if (const auto* type = file.metadata().find<std::uint32_t>("general.file_type")) {
    const auto known = model::file_type_from_id(*type);
    fmt::print("file type  {} (general.file_type {})\n", known ? model::name(*known) : "other",
               *type);
  }
  fmt::print("\nmetadata\n");
  for (const auto& [key, value] : file.metadata().entries()) {
    fmt::print("  {:<44} {}\n", key, value.to_string(kShownElements));
  }
  fmt::print("\ntensors\n  {:<32} {:<6} {:>18} {:>12} {:>14}\n", "name", "type", "shape", "bytes",
             "offset");
  for (const gguf::TensorInfo& t : file.tensors()) {
    fmt::print("  {:<32} {:<6} {:>18} {:>12} {:>14}\n", t.name, quant::name(t.type), shape(t),
               t.bytes, t.offset);
  }
  fmt::print("\ntotals by type\n");
  std::uint64_t all = 0;
  for (const auto& [type, total] : totals_by_type(file)) {
    fmt::print("  {:<6} {:>5} tensors {:>12}\n", type, total.tensors, human_bytes(total.bytes));
    all += total.bytes;
  }
  fmt::print("  {:<6} {:>5} tensors {:>12}\n", "all", file.tensors().size(), human_bytes(all));
}

void print_model_json(const gguf::GgufFile& file) {
  nlohmann::json metadata = nlohmann::json::object();
  for (const auto& [key, value] : file.metadata().entries()) metadata[key] = to_json(value);
  nlohmann::json tensors = nlohmann::json::array();
  for (const gguf::TensorInfo& t : file.tensors()) {
    tensors.push_back({{"name", t.name},
                       {"type", quant::name(t.type)},
                       {"shape", std::vector<std::uint64_t>(t.ne.begin(), t.ne.begin() + t.n_dims)},
                       {"bytes", t.bytes},
                       {"offset", t.offset}});
  }
  nlohmann::json totals = nlohmann::json::object();
  for (const auto& [type, total] : totals_by_type(file))
    totals[type] = {{"tensors", total.tensors}, {"bytes", total.bytes}};
  nlohmann::json out = {{"file", file.name()},
                        {"version", file.version()},
                        {"bytes", file.file_size()},
                        {"alignment", file.alignment()},
                        {"data_offset", file.data_offset()},
                        {"metadata", metadata},
                        {"tensors", tensors},
                        {"totals", totals}};
  std::string problem;
  if (const auto c = try_config(file, problem)) {
    out["llama"] = {{"layers", c->n_layer},
                    {"embd", c->n_embd},
                    {"heads", c->n_head},
                    {"kv_heads", c->n_head_kv},
                    {"head_dim", c->head_dim()},
                    {"ffn", c->n_ff},
                    {"vocab", c->n_vocab},
                    {"context", c->n_ctx_train},
                    {"rope_freq_base", c->rope_freq_base},
                    {"rope_dims", c->n_rot},
                    {"rms_eps", c->rms_eps},
                    {"tied_output", !file.find_tensor("output.weight")}};
  } else {
    out["llama"] = {{"error", problem}};
  }
  // Vocabulary pieces need not be valid UTF-8: replace what is not rather than fail.
  fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

void add_info_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<InfoOptions>();
  auto* info = app.add_subcommand(
      "info", "Show the CPU and the backends Brick picks, or a GGUF model's contents");
  info->add_option("model", o->model, "A GGUF file: its architecture, metadata and tensors")
      ->check(CLI::ExistingFile);
  info->add_flag("--json", o->json, "Machine-readable output (with a model)");
  info->callback([o, &chosen] {
    chosen = [o] {
      if (o->model.empty()) return print_cpu();
      const gguf::GgufFile file = gguf::GgufFile::open(o->model);
      if (o->json) return print_model_json(file);
      print_model_text(file);
    };
  });
}

}  // namespace brick::cli
