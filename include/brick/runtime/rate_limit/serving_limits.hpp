#pragma once
// Static limits a server checks on every request and connection. Boundaries are inclusive: a value
// equal to its limit is admitted, one more is not. A refusal is a typed error that names the limit,
// the value and the maximum.
#include <cstdint>
#include <string_view>

#include "brick/core/error.hpp"

namespace brick {

enum class ServingLimit : std::uint8_t {
  BodyBytes,
  HeaderCount,
  HeaderBytes,
  PipelinedRequests,
  Connections,
};

std::string_view to_string(ServingLimit limit) noexcept;

class ServingLimitExceeded : public CapacityError {
 public:
  ServingLimitExceeded(ServingLimit limit, std::uint64_t value, std::uint64_t maximum);
  ServingLimit limit() const noexcept { return limit_; }
  std::uint64_t value() const noexcept { return value_; }
  std::uint64_t maximum() const noexcept { return maximum_; }

 private:
  ServingLimit limit_;
  std::uint64_t value_;
  std::uint64_t maximum_;
};

struct ServingLimits {
  std::uint64_t max_body_bytes = 1u << 20;
  std::uint64_t max_header_count = 100;
  std::uint64_t max_header_bytes = 16u << 10;
  std::uint64_t max_pipelined_requests = 16;
  std::uint64_t max_connections = 1024;

  std::uint64_t maximum(ServingLimit limit) const noexcept;
  bool admits(ServingLimit limit, std::uint64_t value) const noexcept {
    return value <= maximum(limit);
  }
  // Throws ServingLimitExceeded when value > maximum(limit).
  void check(ServingLimit limit, std::uint64_t value) const;
};

}  // namespace brick
