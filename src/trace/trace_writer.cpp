#include "trace/trace_writer.hpp"

#include <span>

#include "trace/trace_json.hpp"

namespace brick::trace {

TraceWriter::TraceWriter(const std::filesystem::path& path, const TraceConfig& config) : file_(path) {
  // Room for a full buffer plus the largest record, so that the buffer never grows once reserved.
  buffer_.reserve(2 * kFlushBytes);
  detail::append_header(buffer_, config);
  end_line();
}

void TraceWriter::write(const TraceEvent& event) {
  detail::append_event(buffer_, event);
  end_line();
}

void TraceWriter::finish(const TraceSummary& summary) {
  detail::append_summary(buffer_, summary);
  buffer_.push_back('\n');
  flush();
  file_.commit();
}

void TraceWriter::end_line() {
  buffer_.push_back('\n');
  if (buffer_.size() >= kFlushBytes) flush();
}

void TraceWriter::flush() {
  file_.write(std::as_bytes(std::span(buffer_.data(), buffer_.size())));
  buffer_.clear();
}

}  // namespace brick::trace
