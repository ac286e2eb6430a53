// brick: the command-line face of the library. Each subcommand parses its flags and calls the
// library; the work lives in the library.
#include <fmt/format.h>

#include <exception>
#include <new>

#include "brick/core/error.hpp"
#include "command_line.hpp"

int main(int argc, char** argv) {
  brick::cli::CommandLine command_line;
  try {
    const brick::cli::Action action = command_line.parse(argc, argv);
    action();
  } catch (const CLI::ParseError& e) {
    return command_line.exit(e);
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
