#include "brick/runtime/cpu_topology.hpp"

#include <sched.h>

#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace brick {
namespace {

bool read_number(const std::string& path, long& value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> value);
}

}  // namespace

std::size_t usable_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int count = CPU_COUNT(&set);
  return count > 0 ? static_cast<std::size_t>(count) : 1;
}

std::size_t physical_cores() noexcept {
  try {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return usable_cpus();
    std::set<std::pair<long, long>> cores;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &set)) continue;
      const std::string topology =
          "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      long package = 0;
      long core = 0;
      if (!read_number(topology + "physical_package_id", package) ||
          !read_number(topology + "core_id", core)) {
        return usable_cpus();
      }
      cores.emplace(package, core);
    }
    return cores.empty() ? usable_cpus() : cores.size();
  } catch (...) {
    return usable_cpus();
  }
}

}  // namespace brick
