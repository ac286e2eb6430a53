#include <fmt/format.h>

#include <cstdint>

#include "brick/core/backend.hpp"
#include "brick/core/cpu_features.hpp"
#include "brick/quant/matvec.hpp"
#include "brick/quant/tensor_type.hpp"
#include "brick/runtime/simd_config/amx_support.hpp"
#include "commands.hpp"

namespace brick::cli {

void add_info_command(CLI::App& app) {
  auto* info = app.add_subcommand("info", "Show the CPU, its features and the backend Brick picks");
  info->callback([] {
    const CpuFeatures& cpu = cpu_features();
    fmt::print("cpu        {} ({})\n", cpu.brand.empty() ? "unknown" : cpu.brand, cpu.vendor);
    fmt::print("features   {}\n", describe(cpu));
    fmt::print("backends  ");
    for (Backend b : kConcreteBackends) {
      const auto missing = missing_feature(b, cpu);
      fmt::print(" {}={}", name(b), missing ? fmt::format("no (needs {})", *missing) : "yes");
    }
    fmt::print("\namx        {}\n", describe(amx_support()));
    const Backend selected = resolve(Backend::Auto);
    fmt::print("selected   {} (BRICK_BACKEND forces one for the whole process)\n", name(selected));
    fmt::print("kernels    dot, axpy, add, rms_norm, softmax, silu, swiglu, rope, x to q8_K / q8_0 / f16 / bf16: {}\n",
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
  });
}

}  // namespace brick::cli
