#pragma once
// The stream behind ModelTracer::open_stream: records are formatted into one buffer, reserved once,
// and written to an AtomicFile whenever it passes kFlushBytes, so a running stream writes without
// allocating and makes one write call per ~64 KiB.
#include <fmt/format.h>

#include <filesystem>

#include "brick/runtime/atomic_file.hpp"
#include "brick/trace/model_tracer.hpp"

namespace brick::trace {

class TraceWriter {
 public:
  static constexpr std::size_t kFlushBytes = std::size_t{64} << 10;

  TraceWriter(const std::filesystem::path& path, const TraceConfig& config);

  void write(const TraceEvent& event);
  // Writes the summary, flushes and commits the file.
  void finish(const TraceSummary& summary);

 private:
  void end_line();
  void flush();

  AtomicFile file_;
  fmt::memory_buffer buffer_;
};

}  // namespace brick::trace
