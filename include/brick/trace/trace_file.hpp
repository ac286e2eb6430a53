#pragma once
// Trace files: JSON Lines, schema "brick.trace" version 1. One JSON object per line, each with a
// `type` field:
//
//   {"type": "header", "format": "brick.trace", "version": 1, "config": {...}}     first line
//   {"type": "tensor" | "activation" | "attention" | "logits" | "layer_logits" | "quant_error" |
//            "kv_cache" | "anomaly", ...the record's fields...}                       one per event
//   {"type": "summary", ...TraceSummary...}                                          last line, when closed
//
// ModelTracer::open_stream writes them as the model runs; load_trace reads one back into the value
// types. Reading never trusts the file: every line is checked whole, and a bad one is a FormatError
// naming the file, the line number and the field.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brick/trace/trace_config.hpp"
#include "brick/trace/trace_event.hpp"
#include "brick/trace/trace_summary.hpp"

namespace brick::trace {

inline constexpr std::string_view kTraceFormat = "brick.trace";
inline constexpr int kTraceSchemaVersion = 1;

struct TraceFile {
  TraceConfig config;
  std::vector<TraceEvent> events;
  std::optional<TraceSummary> summary;  // nullopt for a trace that was not closed
};

// One line each, without the newline.
std::string header_json(const TraceConfig& config);
std::string to_json(const TraceEvent& event);
std::string to_json(const TraceSummary& summary);

// FormatError naming `what`, the line and the field: a first line that is not a header of this
// format and version, an unknown type, a missing or mistyped field, a line after the summary.
// Empty lines are skipped.
TraceFile parse_trace(std::string_view text, std::string_view what = "trace");
// IoError when it cannot be read, CapacityError for a file over 1 GiB, FormatError as above.
TraceFile load_trace(const std::filesystem::path& path);

}  // namespace brick::trace
