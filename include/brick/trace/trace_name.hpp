#pragma once
// TraceName: the name of a traced tensor or brick ("blk.3.ffn_down", "QkvProjection"), held in a
// fixed array so that a trace record is a plain value that is copied without allocating. A name is
// 1 to kMaxTraceNameLength printable ASCII characters other than '"' and '\' (so it is written to
// JSON as it is); anything else is InvalidArgument.
#include <array>
#include <cstddef>
#include <string_view>

namespace brick::trace {

inline constexpr std::size_t kMaxTraceNameLength = 63;

class TraceName {
 public:
  TraceName() noexcept = default;
  // InvalidArgument for an empty, too long or non-printable name.
  explicit TraceName(std::string_view name);

  std::string_view view() const noexcept { return {chars_.data(), size_}; }
  bool empty() const noexcept { return size_ == 0; }

  friend bool operator==(const TraceName& a, const TraceName& b) noexcept { return a.view() == b.view(); }

 private:
  std::array<char, kMaxTraceNameLength> chars_{};
  std::size_t size_ = 0;
};

}  // namespace brick::trace
