#pragma once
// Errors at Brick's API boundaries. Misuse of an API (bad sizes, an unavailable backend, a bad
// file) throws one of these typed exceptions with a message that says what was wrong and what was
// expected. Outcomes of running a brick (a failed assertion, a blown budget) are not exceptions:
// they come back as values in a RunResult (see compute_brick.hpp). Hot paths never throw.
#include <stdexcept>
#include <string>
#include <string_view>

namespace brick {

enum class ErrorCode {
  InvalidArgument,
  BackendUnavailable,
  Io,
  Format,
  Capacity,
  State,
};

std::string_view to_string(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

// A parameter outside the documented domain: mismatched sizes, an empty span, an unknown name.
class InvalidArgument : public Error {
 public:
  explicit InvalidArgument(const std::string& message)
      : Error(ErrorCode::InvalidArgument, message) {}
};

// A backend was asked for explicitly (or through BRICK_BACKEND) that this CPU or OS cannot run.
class BackendUnavailable : public Error {
 public:
  BackendUnavailable(std::string_view backend, std::string_view missing_feature);
  const std::string& missing_feature() const noexcept { return missing_feature_; }

 private:
  std::string missing_feature_;
};

// The operating system refused a request (open, mmap, madvise, ...); the message carries errno
// text.
class IoError : public Error {
 public:
  explicit IoError(const std::string& message) : Error(ErrorCode::Io, message) {}
};

// Bytes that do not have the expected layout: a truncated or corrupted file, a bad magic number.
class FormatError : public Error {
 public:
  explicit FormatError(const std::string& message) : Error(ErrorCode::Format, message) {}
};

// A bounded resource is full; the request was rejected whole and nothing was changed.
class CapacityError : public Error {
 public:
  explicit CapacityError(const std::string& message) : Error(ErrorCode::Capacity, message) {}
};

// An operation that is not valid in the object's current state (ending a layer never begun, ...).
class StateError : public Error {
 public:
  explicit StateError(const std::string& message) : Error(ErrorCode::State, message) {}
};

}  // namespace brick
