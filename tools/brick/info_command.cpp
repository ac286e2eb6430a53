#include <fmt/format.h>

#include "brick/core/backend.hpp"
#include "brick/core/cpu_features.hpp"
#include "brick/quant/dot_kernels.hpp"
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
    fmt::print(
        "kernels    dot, axpy, add, rms_norm, softmax, silu, swiglu, rope, matvec (f32), quantize_q8k: {}\n",
        name(selected));
    fmt::print("           dot_q5k_q8k, dot_q6k_q8k, k-quant matvec, fused QKV / gate-up: {}\n",
               quant::name(quant::dot_isa(selected)));
  });
}

}  // namespace brick::cli
