#pragma once
#include <CLI/CLI.hpp>

namespace brick::cli {

void add_info_command(CLI::App& app);
void add_run_command(CLI::App& app);

// The exit status the command that ran asked for (0 unless it reported a failure).
int exit_code();
void set_exit_code(int code);

}  // namespace brick::cli
