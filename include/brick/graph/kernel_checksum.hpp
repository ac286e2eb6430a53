#pragma once
// KernelChecksum: what a kernel's output was, in a few numbers that two runs can compare: the
// XXH3-64 of all of its bytes (for bit-exact comparison) and a numeric summary (for comparison
// within a tolerance, between backends that sum in another order). A ChecksumLog holds them in
// execution order, keyed by (kernel name, layer, token position, call index); see divergence.hpp
// for the comparison and checksum_file.hpp for saving a log.
#include <compare>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace brick::graph {

// XXH3-64 with seed 0, as the xxHash library computes it (of "": 0x2D06800538D394C2).
std::uint64_t xxh3_64(std::span<const std::byte> bytes) noexcept;

// count: every value; sum, sum_squares, min and max: over the finite values only (0 when there are
// none); nan_count and inf_count: the values that are not. The sums are in double, in one fixed
// order, so the same values give the same summary on every machine.
struct NumericSummary {
  std::uint64_t count = 0;
  double sum = 0.0;
  double sum_squares = 0.0;
  double min = 0.0;
  double max = 0.0;
  std::uint64_t nan_count = 0;
  std::uint64_t inf_count = 0;

  bool operator==(const NumericSummary&) const = default;
};

NumericSummary summarize(std::span<const float> values) noexcept;

struct ChecksumKey {
  std::string kernel;          // the brick's name: "blk.1.ffn_down"
  std::int32_t layer = -1;     // the observer's layer index; -1: none
  std::int64_t position = -1;  // the token's position in the sequence; -1: not known
  std::uint32_t call = 0;      // earlier entries with the same kernel, layer and position

  auto operator<=>(const ChecksumKey&) const = default;
};

// "blk.1.ffn_down (layer 1, token 3)", with ", call 1" when the call index is not 0.
std::string to_string(const ChecksumKey& key);

struct KernelChecksum {
  ChecksumKey key;
  std::uint64_t hash = 0;  // xxh3_64 of the values' bytes
  NumericSummary summary;

  bool operator==(const KernelChecksum&) const = default;
};

KernelChecksum checksum(ChecksumKey key, std::span<const float> values) noexcept;

// A bounded log of checksums in the order they were recorded. Past limit() entries, record() and
// append() only count what they would have added (dropped()).
class ChecksumLog {
 public:
  static constexpr std::size_t kDefaultLimit = std::size_t{1} << 20;

  // One entry; `kernel` views the log's name storage, valid while the log lives.
  struct Entry {
    std::string_view kernel;
    std::int32_t layer = -1;
    std::int64_t position = -1;
    std::uint32_t call = 0;
    std::uint64_t hash = 0;
    NumericSummary summary;

    ChecksumKey key() const { return {std::string(kernel), layer, position, call}; }
    KernelChecksum checksum() const { return {key(), hash, summary}; }
  };

  explicit ChecksumLog(std::size_t limit = kDefaultLimit) noexcept : limit_(limit) {}

  // Hashes and summarizes `values` as the output of `kernel` at (layer, position), with the next
  // call index of that triple. InvalidArgument for an empty kernel name.
  void record(std::string_view kernel, std::int32_t layer, std::int64_t position, std::span<const float> values);
  // Appends a checksum as it is (one read from a file). InvalidArgument for an empty kernel name or
  // a key the log already holds.
  void append(const KernelChecksum& entry);

  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  std::size_t limit() const noexcept { return limit_; }
  std::uint64_t dropped() const noexcept { return dropped_; }
  // In recording order; i < size().
  Entry operator[](std::size_t i) const noexcept {
    const Record& r = entries_[i];
    return {names_[r.kernel], r.layer, r.position, r.call, r.hash, r.summary};
  }

  // Counts entries dropped where the log was recorded (one read from a file says how many).
  void add_dropped(std::uint64_t entries) noexcept { dropped_ += entries; }
  void clear() noexcept;

 private:
  struct Record {
    std::uint32_t kernel;
    std::int32_t layer;
    std::int64_t position;
    std::uint32_t call;
    std::uint64_t hash;
    NumericSummary summary;
  };
  struct Triple {
    std::uint32_t kernel;
    std::int32_t layer;
    std::int64_t position;
    bool operator==(const Triple&) const = default;
  };
  struct TripleHash {
    std::size_t operator()(const Triple& t) const noexcept;
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };

  std::uint32_t name_id(std::string_view kernel);

  std::size_t limit_;
  std::uint64_t dropped_ = 0;
  std::vector<Record> entries_;
  std::deque<std::string> names_;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> name_ids_;
  std::unordered_map<Triple, std::uint32_t, TripleHash> calls_;  // the next call index of each
};

}  // namespace brick::graph
