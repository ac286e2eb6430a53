#include "brick/core/error.hpp"

#include <fmt/format.h>

namespace brick {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidArgument:
      return "invalid argument";
    case ErrorCode::BackendUnavailable:
      return "backend unavailable";
    case ErrorCode::Io:
      return "I/O error";
    case ErrorCode::Format:
      return "format error";
    case ErrorCode::Capacity:
      return "capacity exceeded";
    case ErrorCode::State:
      return "invalid state";
  }
  return "unknown error";
}

BackendUnavailable::BackendUnavailable(std::string_view backend, std::string_view missing_feature)
    : Error(ErrorCode::BackendUnavailable,
            fmt::format("backend '{}' is unavailable on this machine: the CPU or OS lacks {}",
                        backend, missing_feature)),
      missing_feature_(missing_feature) {}

}  // namespace brick
