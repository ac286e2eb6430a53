#include "graph/checksum_json.hpp"

#include <fmt/format.h>

namespace brick::graph::detail {

std::string hash_text(std::uint64_t hash) { return fmt::format("0x{:016x}", hash); }

nlohmann::json key_json(const ChecksumKey& key) {
  return {{"kernel", key.kernel}, {"layer", key.layer}, {"token", key.position}, {"call", key.call}};
}

nlohmann::json summary_json(const NumericSummary& summary) {
  return {{"count", summary.count}, {"sum", summary.sum}, {"sum_squares", summary.sum_squares},
          {"min", summary.min},     {"max", summary.max}, {"nan", summary.nan_count},
          {"inf", summary.inf_count}};
}

}  // namespace brick::graph::detail
