#pragma once
// The brick command line. Parsing is kept apart from running, so that a command line can be
// checked without doing its work (the argument fuzzer does that).
#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace brick::cli {

class CommandLine {
 public:
  CommandLine();  // every subcommand, as `brick --help` lists them

  // Parses argv[1..argc) and returns the chosen subcommand's work, not started. Throws
  // CLI::ParseError for what the user typed wrong (and for --help and --version, which
  // CLI::App::exit prints) and brick::Error for a value a command refuses; nothing else.
  Action parse(int argc, const char* const* argv);

  // The options and subcommands, for tools that enumerate them (the fuzzer's seeds).
  const CLI::App& app() const noexcept { return app_; }

  // Prints what a ParseError says (help, version or the mistake) and returns the exit status.
  int exit(const CLI::ParseError& error) { return app_.exit(error); }

 private:
  CLI::App app_;
  Action chosen_;
};

}  // namespace brick::cli
