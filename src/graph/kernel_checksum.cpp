#include "brick/graph/kernel_checksum.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "brick/core/backend.hpp"
#include "brick/core/error.hpp"
#include "graph/kernels/checksum_kernels.hpp"

namespace brick::graph {
namespace {

using kernels::kSummaryLanes;
using kernels::SummaryLanes;

// The widest loops this CPU runs; every one gives the same bits.
struct ChecksumKernels {
  std::uint64_t (*hash)(const void*, std::size_t) noexcept;
  void (*lanes)(const float*, std::size_t, SummaryLanes&) noexcept;
};

std::uint64_t xxh3_64_baseline(const void* data, std::size_t bytes) noexcept { return XXH3_64bits(data, bytes); }

const ChecksumKernels& checksum_kernels() noexcept {
  static const ChecksumKernels picked = [] {
    if (is_supported(Backend::Avx2)) return ChecksumKernels{&kernels::xxh3_64_avx2, &kernels::summary_lanes_avx2};
    return ChecksumKernels{&xxh3_64_baseline, &kernels::summary_lanes_scalar};
  }();
  return picked;
}

}  // namespace

std::uint64_t xxh3_64(std::span<const std::byte> bytes) noexcept {
  return checksum_kernels().hash(bytes.data(), bytes.size());
}

NumericSummary summarize(std::span<const float> values) noexcept {
  SummaryLanes lanes;
  const std::size_t blocks = values.size() / kSummaryLanes;
  checksum_kernels().lanes(values.data(), blocks, lanes);
  for (std::size_t i = blocks * kSummaryLanes, lane = 0; i < values.size(); ++i, ++lane) lanes.add(lane, values[i]);

  NumericSummary summary;
  summary.count = values.size();
  float low = std::numeric_limits<float>::infinity();
  float high = -std::numeric_limits<float>::infinity();
  std::uint64_t not_finite = 0;
  for (std::size_t lane = 0; lane < kSummaryLanes; ++lane) {
    not_finite += lanes.not_finite[lane];
    summary.sum += lanes.sum[lane];
    summary.sum_squares += lanes.squares[lane];
    low = std::min(low, lanes.low[lane]);
    high = std::max(high, lanes.high[lane]);
  }
  if (not_finite < values.size()) {
    summary.min = low;
    summary.max = high;
  }
  if (not_finite > 0) {
    summary.nan_count = static_cast<std::uint64_t>(
        std::count_if(values.begin(), values.end(), [](float v) { return std::isnan(v); }));
    summary.inf_count = not_finite - summary.nan_count;
  }
  return summary;
}

std::string to_string(const ChecksumKey& key) {
  std::string text = key.kernel + " (";
  text += key.layer >= 0 ? fmt::format("layer {}", key.layer) : "no layer";
  text += key.position >= 0 ? fmt::format(", token {}", key.position) : ", no token";
  if (key.call != 0) text += fmt::format(", call {}", key.call);
  return text + ")";
}

KernelChecksum checksum(ChecksumKey key, std::span<const float> values) noexcept {
  return {std::move(key), xxh3_64(std::as_bytes(values)), summarize(values)};
}

std::size_t ChecksumLog::TripleHash::operator()(const Triple& t) const noexcept {
  const std::uint64_t mixed = (static_cast<std::uint64_t>(t.kernel) << 32 | static_cast<std::uint32_t>(t.layer)) ^
                              (static_cast<std::uint64_t>(t.position) * 0x9E3779B97F4A7C15ull);
  return std::hash<std::uint64_t>{}(mixed);
}

std::uint32_t ChecksumLog::name_id(std::string_view kernel) {
  if (kernel.empty()) throw InvalidArgument("ChecksumLog: a checksum needs a kernel name");
  const auto it = name_ids_.find(kernel);
  if (it != name_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(kernel);
  name_ids_.emplace(names_.back(), id);
  return id;
}

void ChecksumLog::record(std::string_view kernel, std::int32_t layer, std::int64_t position,
                         std::span<const float> values) {
  const std::uint32_t id = name_id(kernel);
  if (entries_.size() >= limit_) {
    ++dropped_;
    return;
  }
  const std::uint32_t call = calls_[{id, layer, position}]++;
  entries_.push_back({id, layer, position, call, xxh3_64(std::as_bytes(values)), summarize(values)});
}

void ChecksumLog::append(const KernelChecksum& entry) {
  const std::uint32_t id = name_id(entry.key.kernel);
  std::uint32_t& next = calls_[{id, entry.key.layer, entry.key.position}];
  if (entry.key.call != next) {
    throw InvalidArgument(fmt::format("ChecksumLog::append: {} has call index {}; the log expects {} next (the "
                                      "entries of one kernel, layer and token come in call order, once each)",
                                      to_string(entry.key), entry.key.call, next));
  }
  if (entries_.size() >= limit_) {
    ++dropped_;
    return;
  }
  ++next;
  entries_.push_back({id, entry.key.layer, entry.key.position, entry.key.call, entry.hash, entry.summary});
}

void ChecksumLog::clear() noexcept {
  dropped_ = 0;
  entries_.clear();
  names_.clear();
  name_ids_.clear();
  calls_.clear();
}

}  // namespace brick::graph
