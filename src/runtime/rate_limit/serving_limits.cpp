#include "brick/runtime/rate_limit/serving_limits.hpp"

#include <fmt/format.h>

namespace brick {

std::string_view to_string(ServingLimit limit) noexcept {
  switch (limit) {
    case ServingLimit::BodyBytes: return "body bytes";
    case ServingLimit::HeaderCount: return "header count";
    case ServingLimit::HeaderBytes: return "header bytes";
    case ServingLimit::PipelinedRequests: return "pipelined requests";
    case ServingLimit::Connections: return "connections";
  }
  return "unknown limit";
}

ServingLimitExceeded::ServingLimitExceeded(ServingLimit limit, std::uint64_t value,
                                           std::uint64_t maximum)
    : CapacityError(fmt::format("serving limit exceeded: {} is {}, the maximum is {}",
                                to_string(limit), value, maximum)),
      limit_(limit),
      value_(value),
      maximum_(maximum) {}

std::uint64_t ServingLimits::maximum(ServingLimit limit) const noexcept {
  switch (limit) {
    case ServingLimit::BodyBytes: return max_body_bytes;
    case ServingLimit::HeaderCount: return max_header_count;
    case ServingLimit::HeaderBytes: return max_header_bytes;
    case ServingLimit::PipelinedRequests: return max_pipelined_requests;
    case ServingLimit::Connections: return max_connections;
  }
  return 0;
}

void ServingLimits::check(ServingLimit limit, std::uint64_t value) const {
  const std::uint64_t max = maximum(limit);
  if (value > max) throw ServingLimitExceeded(limit, value, max);
}

}  // namespace brick
