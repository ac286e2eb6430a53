// brick: the command-line face of the library. Each subcommand parses its flags and calls the
// library; the work lives in the library.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <new>

#include "brick/core/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Brick: self-verifying, profiled compute bricks for LLM inference on the CPU",
               "brick"};
  app.set_version_flag("--version", fmt::format("brick {}", BRICK_VERSION));
  app.require_subcommand(1);
  brick::cli::add_info_command(app);
  brick::cli::add_run_command(app);
  brick::cli::add_gen_model_command(app);
  brick::cli::add_quantize_command(app);
  brick::cli::add_verify_command(app);
  brick::cli::add_report_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const brick::Error& e) {
    fmt::print(stderr, "brick: {}: {}\n", brick::to_string(e.code()), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "brick: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "brick: {}\n", e.what());
    return 1;
  }
  return brick::cli::exit_code();
}
