#include <fmt/format.h>

#include "brick/core/backend.hpp"
#include "brick/core/cpu_features.hpp"
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
    fmt::print("\namx        {}", describe(amx_support()));
    fmt::print("\nselected   {} (BRICK_BACKEND forces one for the whole process)\n",
               name(resolve(Backend::Auto)));
  });
}

}  // namespace brick::cli
