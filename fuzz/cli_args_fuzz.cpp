// libFuzzer target for the brick command line. Each input is a command line (cli_args_fuzz_input.hpp)
// parsed by the same CommandLine as brick, without running the chosen command. Parsing either
// succeeds with a command to run or throws CLI::ParseError or a Brick error; a crash, a sanitizer
// report, another exception (std::out_of_range from a number, std::bad_alloc from a size) or a
// successful parse with no command is a finding. Built and run by scripts/fuzz.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "cli_args_fuzz_input.hpp"
#include "command_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> arguments =
      brick::fuzz::split_arguments(reinterpret_cast<const char*>(data), size);
  std::vector<const char*> argv{"brick"};
  for (const std::string& argument : arguments) argv.push_back(argument.c_str());
  brick::cli::CommandLine command_line;  // fresh options for each input
  try {
    const brick::cli::Action action = command_line.parse(static_cast<int>(argv.size()), argv.data());
    if (!action) std::abort();
  } catch (const CLI::ParseError&) {
  } catch (const brick::Error&) {
  }
  return 0;
}
