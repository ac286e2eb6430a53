#include <fmt/format.h>

#include "commands.hpp"

namespace brick::cli {

void add_run_command(CLI::App& app) {
  auto* run = app.add_subcommand("run", "Run the built-in transformer-layer workload, profiled and verified");
  run->callback([] { fmt::print("brick run: the layer workload is being assembled\n"); });
}

}  // namespace brick::cli
