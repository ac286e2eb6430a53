#include "brick/graph/divergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "brick/core/error.hpp"
#include "graph/checksum_json.hpp"

namespace brick::graph {
namespace {

// One-sided keys a terminal report shows of each side; the JSON has them all.
constexpr std::size_t kShownOneSided = 5;

// A key that views a log's strings, for the reference's index.
struct KeyView {
  std::string_view kernel;
  std::int32_t layer;
  std::int64_t position;
  std::uint32_t call;
  bool operator==(const KeyView&) const = default;
};

struct KeyViewHash {
  std::size_t operator()(const KeyView& k) const noexcept {
    std::size_t h = std::hash<std::string_view>{}(k.kernel);
    for (const std::uint64_t part : {static_cast<std::uint64_t>(k.layer), static_cast<std::uint64_t>(k.position),
                                     static_cast<std::uint64_t>(k.call)}) {
      h ^= std::hash<std::uint64_t>{}(part) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    }
    return h;
  }
};

KeyView view(const ChecksumLog::Entry& e) noexcept { return {e.kernel, e.layer, e.position, e.call}; }

double relative(double a, double b, double scale) noexcept {
  const double gap = std::abs(a - b);
  if (gap == 0.0) return 0.0;
  return scale > 0.0 ? gap / scale : std::numeric_limits<double>::infinity();
}

double rms(const NumericSummary& s) noexcept {
  const std::uint64_t finite = s.count - s.nan_count - s.inf_count;
  return finite > 0 ? std::sqrt(s.sum_squares / static_cast<double>(finite)) : 0.0;
}

nlohmann::json side_json(std::uint64_t hash, const NumericSummary& summary) {
  return {{"hash", detail::hash_text(hash)}, {"summary", detail::summary_json(summary)}};
}

std::string summary_text(const NumericSummary& s) {
  return fmt::format("sum {:.9g}, rms {:.9g}, min {:.9g}, max {:.9g}, {} values, {} NaN, {} Inf", s.sum, rms(s), s.min,
                     s.max, s.count, s.nan_count, s.inf_count);
}

void append_one_sided(std::string& text, const char* side, const std::vector<ChecksumKey>& keys) {
  if (keys.empty()) return;
  text += fmt::format("{} kernels only in the {}:", keys.size(), side);
  for (std::size_t i = 0; i < std::min(keys.size(), kShownOneSided); ++i) text += "\n  " + to_string(keys[i]);
  if (keys.size() > kShownOneSided) text += fmt::format("\n  ... and {} more", keys.size() - kShownOneSided);
  text += '\n';
}

}  // namespace

std::string_view name(CompareMode mode) noexcept { return mode == CompareMode::Exact ? "exact" : "tolerance"; }

std::optional<CompareMode> parse_compare_mode(std::string_view text) noexcept {
  std::string lowered;
  for (const char c : text) lowered.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (lowered == "exact") return CompareMode::Exact;
  if (lowered == "tolerance") return CompareMode::Tolerance;
  return std::nullopt;
}

double summary_difference(const NumericSummary& a, const NumericSummary& b) noexcept {
  if (a.count != b.count || a.nan_count != b.nan_count || a.inf_count != b.inf_count) {
    return std::numeric_limits<double>::infinity();
  }
  const double sum_scale = std::sqrt(static_cast<double>(a.count) * std::max(a.sum_squares, b.sum_squares));
  return std::max(relative(a.sum, b.sum, sum_scale), relative(rms(a), rms(b), std::max(rms(a), rms(b))));
}

DivergenceReport find_divergence(const ChecksumLog& reference, const ChecksumLog& candidate, CompareMode mode,
                                 double tolerance) {
  if (mode != CompareMode::Exact && mode != CompareMode::Tolerance) {
    throw InvalidArgument(fmt::format("find_divergence: {} is not a CompareMode", static_cast<int>(mode)));
  }
  if (!std::isfinite(tolerance) || tolerance < 0.0) {
    throw InvalidArgument(fmt::format("find_divergence: a tolerance of {}; it must be a finite number >= 0", tolerance));
  }
  DivergenceReport report;
  report.mode = mode;
  report.tolerance = mode == CompareMode::Tolerance ? tolerance : 0.0;
  report.reference_dropped = reference.dropped();
  report.candidate_dropped = candidate.dropped();

  std::unordered_map<KeyView, std::size_t, KeyViewHash> index;
  index.reserve(reference.size());
  for (std::size_t i = 0; i < reference.size(); ++i) index.emplace(view(reference[i]), i);
  std::vector<bool> matched(reference.size(), false);

  for (std::size_t i = 0; i < candidate.size(); ++i) {
    const ChecksumLog::Entry c = candidate[i];
    const auto it = index.find(view(c));
    if (it == index.end()) {
      report.only_in_candidate.push_back(c.key());
      continue;
    }
    matched[it->second] = true;
    ++report.compared;
    const ChecksumLog::Entry r = reference[it->second];
    const double difference = summary_difference(r.summary, c.summary);
    const bool same = mode == CompareMode::Exact ? r.hash == c.hash : difference <= tolerance;
    if (same) continue;
    if (report.divergent++ == 0) report.first = Divergence{i, c.key(), r.hash, c.hash, r.summary, c.summary, difference};
  }
  for (std::size_t i = 0; i < reference.size(); ++i) {
    if (!matched[i]) report.only_in_reference.push_back(reference[i].key());
  }
  return report;
}

std::string DivergenceReport::to_text() const {
  const std::string how =
      mode == CompareMode::Exact ? std::string("exact") : fmt::format("tolerance {:g}", tolerance);
  std::string text;
  if (!diverged()) {
    text = fmt::format("no divergence in {} kernels compared ({})\n", compared, how);
  } else if (first) {
    const Divergence& d = *first;
    text = fmt::format(
        "first divergence ({}): {}, entry {} of the candidate\n"
        "  reference  {}  {}\n"
        "  candidate  {}  {}\n"
        "  difference {:.3g} (relative to the values' size); {} of {} kernels compared diverge\n",
        how, to_string(d.key), d.index, detail::hash_text(d.reference_hash), summary_text(d.reference),
        detail::hash_text(d.candidate_hash), summary_text(d.candidate), d.difference, divergent, compared);
  } else {
    text = fmt::format("the {} kernels both runs have agree ({}), but the runs do not have the same kernels\n",
                       compared, how);
  }
  append_one_sided(text, "reference", only_in_reference);
  append_one_sided(text, "candidate", only_in_candidate);
  if (reference_dropped + candidate_dropped > 0) {
    text += fmt::format("not compared: {} reference and {} candidate checksums past the logs' limits\n",
                        reference_dropped, candidate_dropped);
  }
  return text;
}

std::string DivergenceReport::to_json() const {
  nlohmann::json reference_only = nlohmann::json::array();
  for (const ChecksumKey& key : only_in_reference) reference_only.push_back(detail::key_json(key));
  nlohmann::json candidate_only = nlohmann::json::array();
  for (const ChecksumKey& key : only_in_candidate) candidate_only.push_back(detail::key_json(key));
  nlohmann::json first_json = nullptr;
  if (first) {
    // An infinite difference (the counts differ) has no JSON number: null.
    first_json = {{"index", first->index},
                  {"key", detail::key_json(first->key)},
                  {"reference", side_json(first->reference_hash, first->reference)},
                  {"candidate", side_json(first->candidate_hash, first->candidate)},
                  {"difference", std::isfinite(first->difference) ? nlohmann::json(first->difference) : nullptr}};
  }
  const nlohmann::json json = {{"mode", name(mode)},
                               {"tolerance", tolerance},
                               {"compared", compared},
                               {"divergent", divergent},
                               {"diverged", diverged()},
                               {"first", first_json},
                               {"only_in_reference", reference_only},
                               {"only_in_candidate", candidate_only},
                               {"reference_dropped", reference_dropped},
                               {"candidate_dropped", candidate_dropped}};
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace brick::graph
