// Writes the seed corpus of the CLI fuzz target from the command line itself, so that it follows
// every option as options are added: each subcommand alone, and each of its options with a value
// (its default where it shows one), one file each.
//   brick_cli_args_fuzz_seeds DIR
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "brick/runtime/atomic_file.hpp"
#include "cli_args_fuzz_input.hpp"
#include "command_line.hpp"
#include "seed_folder.hpp"

namespace {

// A value the option's own check is likely to take: its default, else a small number or a path.
std::string seed_value(const CLI::Option& option) {
  if (!option.get_default_str().empty()) return option.get_default_str();
  return option.get_positional() ? "model.gguf" : "1";
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::filesystem::path> given = brick::fuzz::seed_folder(argc, argv);
  if (!given) return 2;
  const std::filesystem::path& dir = *given;
  std::vector<std::vector<std::string>> lines{{"--help"}, {"--version"}};
  // The seeds come from the parser's own description of the command line; nothing is parsed.
  const auto describe = [&](const CLI::App& app) {
    for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
      const std::string name = command->get_name();
      lines.push_back({name});
      for (const CLI::Option* option : command->get_options()) {
        if (option == command->get_help_ptr()) continue;
        std::vector<std::string> line{name};
        if (option->get_positional()) {
          line.push_back(seed_value(*option));
        } else {
          line.push_back(option->get_lnames().empty() ? "-" + option->get_snames().front()
                                                      : "--" + option->get_lnames().front());
          if (option->get_type_size() != 0) line.push_back(seed_value(*option));
        }
        lines.push_back(line);
      }
    }
  };
  brick::cli::CommandLine command_line;
  describe(command_line.app());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    brick::write_file_atomically(dir / fmt::format("seed-{:03}", i), brick::fuzz::join_arguments(lines[i]));
  }
  std::printf("%zu command lines in %s\n", lines.size(), dir.c_str());
  return 0;
}
