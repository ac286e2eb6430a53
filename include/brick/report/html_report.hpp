#pragma once
// The profile of a run as one self-contained HTML page: a bar chart of the time per brick with its
// budget and utilisation, tokens/s per layer, a roofline of every brick against the machine's
// peaks, a timeline of one token across layers and threads, and the run's verdicts.
//
// The page loads nothing: no script, no font, no image from elsewhere (inline SVG and CSS only, and
// a Content-Security-Policy that forbids every load), and it reads in light and dark mode
// (prefers-color-scheme). Every string from the input (brick, layer and model names, verdict
// details) is HTML-escaped. Every number the page shows also sits, unrounded, in a data-value
// attribute beside it (the shortest text that reads back as the same double), so that a test or a
// script can check the page against its input.
//
// The input comes from a profile JSON document: schema "brick.profile" version 1
// (BrickProfiler::to_json, profile/profiler.hpp), which `brick run --profile-json` writes with one
// more field, "run" (RunFacts; to_profile_json() below):
//   "run": {"title": string, "tokens": uint,
//           "layers": [{"layer": string, "runs": uint, "ns": uint}],
//           "peaks": {"gflops_per_second": number, "gb_per_second": number} | null,
//           "timeline_tokens": uint,
//           "timeline": [{"label": string, "kind": NodeKind name, "layer": int, "thread": uint,
//                         "start_ns": uint, "duration_ns": uint}],
//           "verdicts": [{"check": string, "passed": bool, "detail": string}]}
// A profile without "run" (BrickProfiler::write_json's) still makes a page: the sections it lacks
// say what would fill them.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brick/graph/execution_graph.hpp"
#include "brick/graph/roofline.hpp"
#include "brick/profile/profiler.hpp"

namespace brick::report {

// One entry of the profile's "bricks", as the page uses it.
struct BrickTime {
  std::string name;
  std::string category;
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  std::uint64_t flops = 0;
  double share = 0.0;  // of the profile's total_ns, 0..1
  double us_per_token = 0.0;
  double tokens_per_second = 0.0;
  double gb_per_second = 0.0;
  double gflop_per_second = 0.0;
  std::optional<double> budget_us_per_token;  // with utilisation: both or neither
  std::optional<double> utilisation;          // us_per_token / budget (1: exactly on budget)
};

// A layer's summed time over the run (LlamaDecoder::layer_times).
struct LayerTime {
  std::string layer;
  std::uint64_t runs = 0;
  std::uint64_t ns = 0;
};

// One node of the timeline; start_ns counts from the start of the token's pass.
struct TimelineSpan {
  std::string label;
  graph::NodeKind kind = graph::NodeKind::Kernel;
  std::int32_t layer = -1;
  std::uint32_t thread = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t duration_ns = 0;
};

// A check of the run and its outcome: "verify", "budgets", "run-time assertions", "checksums", ...
struct Verdict {
  std::string check;
  bool passed = false;
  std::string detail;
};

// What a run knows beyond its profiler.
struct RunFacts {
  std::string title;          // the model's name
  std::uint64_t tokens = 0;   // tokens every layer evaluated (tokens/s per layer = tokens / time)
  std::vector<LayerTime> layers;
  std::optional<graph::MachinePeaks> peaks;  // the roofs of the roofline chart
  std::uint64_t timeline_tokens = 0;         // tokens in the timeline's pass
  std::vector<TimelineSpan> timeline;
  std::vector<Verdict> verdicts;
};

struct ReportInput {
  std::uint64_t total_ns = 0;
  std::uint64_t total_tokens = 0;
  std::vector<BrickTime> bricks;  // longest total first, as the profile lists them
  RunFacts run;
};

// The timeline of the last forward pass in `graph`: the nodes from the last start of its first
// layer on (layers, bricks, kernels, transfers, syncs), at most `limit` of them, with times from
// the pass's start; sets `tokens` to the elements of the pass's first brick. Empty when the graph
// holds no layer.
std::vector<TimelineSpan> last_pass_timeline(const graph::ExecutionGraph& graph, std::uint64_t& tokens,
                                             std::size_t limit = 4096);

// BrickProfiler::to_json() with the "run" field above. InvalidArgument for facts that would not
// read back: a non-finite number, invalid peaks, a label that is not UTF-8.
std::string to_profile_json(const BrickProfiler& profiler, const RunFacts& run);

// Reads a profile document (`what` names it in messages). FormatError naming `what` and the field
// for text that is not JSON, another schema or version, or a field missing, of another type or out
// of range (a negative count, a share outside 0..1, a non-finite number, invalid peaks).
ReportInput parse_report_input(std::string_view profile_json, std::string_view what = "profile");
// The same from files: `profile` as above, and when given `graph` (a "brick.graph" JSON export,
// graph/graph_export.hpp) the timeline of its last pass in place of the profile's. IoError when a
// file cannot be read, CapacityError past 256 MiB, FormatError as above.
ReportInput read_report_input(const std::filesystem::path& profile,
                              const std::optional<std::filesystem::path>& graph = std::nullopt);

// The page. InvalidArgument for an input parse_report_input would refuse (non-finite or negative
// numbers, invalid peaks, a share outside 0..1, a budget without its utilisation).
std::string to_html(const ReportInput& input);
// Writes to_html(input) to `path` atomically (runtime/atomic_file.hpp); IoError when it cannot.
void write_html_report(const std::filesystem::path& path, const ReportInput& input);

}  // namespace brick::report
