#pragma once
// The JSON forms of checksum keys, summaries and hashes, shared by the checksum file and the
// divergence report so that both spell them the same way.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "brick/graph/kernel_checksum.hpp"

namespace brick::graph::detail {

// "0x2d06800538d394c2": JSON numbers past 2^53 do not survive most readers.
std::string hash_text(std::uint64_t hash);

// {"kernel", "layer", "token", "call"}
nlohmann::json key_json(const ChecksumKey& key);
// {"count", "sum", "sum_squares", "min", "max", "nan", "inf"}
nlohmann::json summary_json(const NumericSummary& summary);

}  // namespace brick::graph::detail
