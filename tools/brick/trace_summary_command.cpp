// brick trace-summary: what a saved model trace (brick run --trace-model) says: anomalies, the
// worst quantized bricks, attention sinks per layer and head, entropy over the steps.
#include <fmt/format.h>

#include <string>

#include "brick/trace/trace_digest.hpp"
#include "brick/trace/trace_file.hpp"
#include "commands.hpp"

namespace brick::cli {
namespace {

struct TraceSummaryOptions {
  std::string trace;
  std::size_t rows = 10;
};

void trace_summary(const TraceSummaryOptions& o) {
  fmt::print("{}", trace::format_trace_digest(trace::digest_trace(trace::load_trace(o.trace)), o.rows));
}

}  // namespace

void add_trace_summary_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<TraceSummaryOptions>();
  auto* cmd = app.add_subcommand("trace-summary",
                                 "Summarise a model trace (brick run --trace-model): anomalies, worst quantized "
                                 "bricks, attention sinks per layer/head, entropy over the steps");
  cmd->add_option("trace", o->trace, "The trace, JSON Lines")->required()->check(CLI::ExistingFile);
  cmd->add_option("--rows", o->rows, "Rows per table")->capture_default_str()->transform(whole_number(1, 1000000));
  cmd->callback([o, &chosen] { chosen = [o] { trace_summary(*o); }; });
}

}  // namespace brick::cli
