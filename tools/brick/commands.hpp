#pragma once
#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "brick/model/file_type.hpp"

namespace brick::cli {

// A subcommand's work, with its options as parsed.
using Action = std::function<void()>;

// Each adds its subcommand to `app`; when a command line names it, parsing sets `chosen` to its
// work, which runs only when called.
void add_info_command(CLI::App& app, Action& chosen);
void add_run_command(CLI::App& app, Action& chosen);
void add_gen_model_command(CLI::App& app, Action& chosen);
void add_quantize_command(CLI::App& app, Action& chosen);
void add_verify_command(CLI::App& app, Action& chosen);
void add_report_command(CLI::App& app, Action& chosen);
void add_trace_summary_command(CLI::App& app, Action& chosen);

// The exit status the command that ran asked for (0 unless it reported a failure).
int exit_code();
void set_exit_code(int code);

// A --type value (q4_k_m, ...); InvalidArgument listing the names otherwise.
model::FileType parse_file_type_option(const std::string& text);

// Option values as the user means them, with messages in the flag's terms: a whole decimal number
// in [min, max] (no sign, no octal or hex, nothing that saturates), or a finite decimal number in
// [min, max] (no nan, inf or hex floats).
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);
CLI::Validator decimal_number(double min, double max);

// For options whose values are names: the user's spelling in lower case.
std::string lower_case(std::string text);

// Every output path is checked before the run, so that a typo does not cost the run: IoError
// naming `flag` when `path` (if given) is a directory or its folder is missing or not writable.
void require_writable(const std::string& path, const char* flag);

// --threads: 0 means the physical cores; more threads than usable CPUs are clamped to them (with a
// note on stderr: more would only contend).
std::size_t thread_count(std::size_t requested);

}  // namespace brick::cli
