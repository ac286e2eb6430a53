// libFuzzer target for the trace reader: parse_trace on any text. A FormatError is the only
// acceptable way to refuse it; any other exception, a crash, a read outside the input (ASan),
// undefined behaviour (UBSan), a leak, a slow input or an oversized allocation is a finding.
//
// A trace that parses is written again with the library's writers (header, events, summary) and read
// back: it must come back equal, and its digest must print.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "brick/core/error.hpp"
#include "brick/trace/trace_digest.hpp"
#include "brick/trace/trace_file.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

std::string written(const brick::trace::TraceFile& trace) {
  std::string text = brick::trace::header_json(trace.config) + "\n";
  for (const brick::trace::TraceEvent& event : trace.events) text += brick::trace::to_json(event) + "\n";
  if (trace.summary) text += brick::trace::to_json(*trace.summary) + "\n";
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace brick::trace;
  TraceFile trace;
  try {
    trace = parse_trace(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
  } catch (const brick::FormatError&) {
    return 0;
  }
  const TraceFile again = parse_trace(written(trace), "rewritten");
  require(again.config == trace.config);
  require(again.events == trace.events);
  require(again.summary == trace.summary);
  require(!format_trace_digest(digest_trace(trace)).empty());
  return 0;
}
