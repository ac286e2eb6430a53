// Option values several commands share.
#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/runtime/cpu_topology.hpp"
#include "commands.hpp"

namespace brick::cli {

model::FileType parse_file_type_option(const std::string& text) {
  if (const auto type = model::parse_file_type(text)) return *type;
  throw InvalidArgument(fmt::format(
      "unknown type '{}'; Brick writes q4_k_m, q5_k_m, q6_k, q8_0, f16, bf16 and f32", text));
}

std::size_t thread_count(std::size_t requested) {
  if (requested == 0) return physical_cores();
  const std::size_t cpus = usable_cpus();
  if (requested > cpus) {
    fmt::print(stderr, "brick: {} threads asked for, {} CPUs usable: running {}\n", requested, cpus,
               cpus);
    return cpus;
  }
  return requested;
}

}  // namespace brick::cli
