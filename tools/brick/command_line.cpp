#include "command_line.hpp"

#include <fmt/format.h>

namespace brick::cli {

CommandLine::CommandLine()
    : app_("Brick: self-verifying, profiled compute bricks for LLM inference on the CPU", "brick") {
  app_.set_version_flag("--version", fmt::format("brick {}", BRICK_VERSION));
  app_.require_subcommand(1);
  add_info_command(app_, chosen_);
  add_run_command(app_, chosen_);
  add_gen_model_command(app_, chosen_);
  add_quantize_command(app_, chosen_);
  add_verify_command(app_, chosen_);
  add_report_command(app_, chosen_);
  add_trace_summary_command(app_, chosen_);
}

Action CommandLine::parse(int argc, const char* const* argv) {
  chosen_ = nullptr;
  app_.parse(argc, argv);
  return std::move(chosen_);
}

}  // namespace brick::cli
