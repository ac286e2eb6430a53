#pragma once
// Writing trace records as single-line JSON into a reusable buffer: fmt only, so that a stream
// whose buffer has reached its size writes without allocating. Every number a record holds is
// finite by construction; doubles are written in their shortest form that reads back exactly.
#include <fmt/format.h>

#include "brick/trace/trace_config.hpp"
#include "brick/trace/trace_event.hpp"
#include "brick/trace/trace_summary.hpp"

namespace brick::trace::detail {

void append_header(fmt::memory_buffer& out, const TraceConfig& config);
void append_event(fmt::memory_buffer& out, const TraceEvent& event);
void append_summary(fmt::memory_buffer& out, const TraceSummary& summary);

}  // namespace brick::trace::detail
