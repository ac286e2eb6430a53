// brick report: a profile JSON (brick run --profile-json) as one self-contained HTML page.
#include <string>

#include "brick/report/html_report.hpp"
#include "commands.hpp"

namespace brick::cli {
namespace {

struct ReportOptions {
  std::string profile;
  std::string graph;
  std::string output;
};

void report(const ReportOptions& o) {
  require_writable(o.output, "--output");
  const std::optional<std::filesystem::path> graph =
      o.graph.empty() ? std::nullopt : std::optional<std::filesystem::path>(o.graph);
  report::write_html_report(o.output, report::read_report_input(o.profile, graph));
}

}  // namespace

void add_report_command(CLI::App& app, Action& chosen) {
  auto o = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand("report",
                                 "Turn a profile (brick run --profile-json) into one self-contained HTML page: time "
                                 "per brick, tokens/s per layer, roofline, timeline, verdicts");
  cmd->add_option("profile", o->profile, "The profile JSON")->required()->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "The HTML file to write")->required();
  cmd->add_option("--graph", o->graph,
                  "An execution graph (brick run --graph FILE.json): its last pass becomes the timeline")
      ->check(CLI::ExistingFile);
  cmd->callback([o, &chosen] { chosen = [o] { report(*o); }; });
}

}  // namespace brick::cli
