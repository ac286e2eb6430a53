#include "brick/graph/checksum_file.hpp"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "brick/core/error.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "graph/checksum_json.hpp"
#include "graph/json_document.hpp"

namespace brick::graph {
namespace {

constexpr std::string_view kFormat = "brick.checksums";
constexpr std::int64_t kVersion = 1;
constexpr std::size_t kMaxFileBytes = std::size_t{512} << 20;

std::vector<std::int32_t> token_ids(const detail::JsonObject& object, std::string_view key) {
  std::vector<std::int32_t> ids;
  for (const nlohmann::json& id : object.array(key)) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
        id.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      object.fail(key, "an array of token ids (whole numbers from 0 to 2^31 - 1)");
    }
    ids.push_back(static_cast<std::int32_t>(id.get<std::int64_t>()));
  }
  return ids;
}

NumericSummary read_summary(const detail::JsonObject& s) {
  NumericSummary summary;
  summary.count = s.unsigned_integer("count");
  summary.sum = s.number("sum");
  summary.sum_squares = s.number("sum_squares");
  summary.min = s.number("min");
  summary.max = s.number("max");
  summary.nan_count = s.unsigned_integer("nan");
  summary.inf_count = s.unsigned_integer("inf");
  if (summary.nan_count > summary.count || summary.inf_count > summary.count - summary.nan_count) {
    throw FormatError(fmt::format("{}: more NaN and Inf values than values", s.path()));
  }
  if (summary.sum_squares < 0.0 || summary.min > summary.max) {
    throw FormatError(fmt::format("{}: a negative sum of squares or a minimum above the maximum", s.path()));
  }
  return summary;
}

KernelChecksum read_entry(const detail::JsonObject& e) {
  KernelChecksum entry;
  entry.key.kernel = e.string("kernel");
  entry.key.layer = static_cast<std::int32_t>(e.integer("layer", -1, std::numeric_limits<std::int32_t>::max()));
  entry.key.position = e.integer("token", -1, std::numeric_limits<std::int64_t>::max());
  entry.key.call = static_cast<std::uint32_t>(e.unsigned_integer("call", std::numeric_limits<std::uint32_t>::max()));
  entry.hash = e.hash("hash");
  entry.summary = read_summary(e.object("summary"));
  return entry;
}

ChecksumRun read_run(const detail::JsonObject& r) {
  ChecksumRun run{r.string("name"), ChecksumLog(0)};
  if (run.name.empty()) r.fail("name", "a run name that is not empty");
  const std::size_t entries = r.array("entries").size();
  const std::uint64_t limit = r.unsigned_integer("limit");
  if (limit < entries) r.fail("limit", fmt::format("at least the {} entries of the run", entries));
  run.log = ChecksumLog(limit);
  for (std::size_t i = 0; i < entries; ++i) {
    const detail::JsonObject e = r.element("entries", i);
    try {
      run.log.append(read_entry(e));
    } catch (const InvalidArgument& error) {
      throw FormatError(fmt::format("{}: {}", e.path(), error.what()));
    }
  }
  run.log.add_dropped(r.unsigned_integer("dropped"));
  return run;
}

ChecksumFile from_document(const nlohmann::json& document, std::string_view what) {
  const detail::JsonObject root(document, std::string(what));
  if (root.string("format") != kFormat) root.fail("format", fmt::format("\"{}\"", kFormat));
  if (root.integer("version", 0, std::numeric_limits<std::int64_t>::max()) != kVersion) {
    root.fail("version", fmt::format("{} (the version this build reads)", kVersion));
  }
  ChecksumFile file;
  file.model = root.string("model");
  file.prompt = token_ids(root, "prompt");
  file.tokens = token_ids(root, "tokens");
  for (std::size_t i = 0; i < root.array("runs").size(); ++i) {
    ChecksumRun run = read_run(root.element("runs", i));
    if (file.find(run.name) != nullptr) {
      throw FormatError(fmt::format("{}.runs[{}]: a second run named '{}'", what, i, run.name));
    }
    file.runs.push_back(std::move(run));
  }
  return file;
}

}  // namespace

const ChecksumRun* ChecksumFile::find(std::string_view run) const noexcept {
  for (const ChecksumRun& r : runs) {
    if (r.name == run) return &r;
  }
  return nullptr;
}

std::string to_json(const ChecksumFile& file) {
  nlohmann::json runs = nlohmann::json::array();
  for (const ChecksumRun& run : file.runs) {
    nlohmann::json entries = nlohmann::json::array();
    for (std::size_t i = 0; i < run.log.size(); ++i) {
      const ChecksumLog::Entry e = run.log[i];
      nlohmann::json entry = detail::key_json(e.key());
      entry["hash"] = detail::hash_text(e.hash);
      entry["summary"] = detail::summary_json(e.summary);
      entries.push_back(std::move(entry));
    }
    runs.push_back({{"name", run.name}, {"limit", run.log.limit()}, {"dropped", run.log.dropped()},
                    {"entries", std::move(entries)}});
  }
  const nlohmann::json json = {{"format", kFormat}, {"version", kVersion},       {"model", file.model},
                               {"prompt", file.prompt}, {"tokens", file.tokens}, {"runs", std::move(runs)}};
  return json.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ChecksumFile checksum_file_from_json(std::string_view text, std::string_view what) {
  return from_document(detail::parse_json(text, what), what);
}

void save_checksums(const std::filesystem::path& path, const ChecksumFile& file) {
  write_file_atomically(path, to_json(file));
}

ChecksumFile load_checksums(const std::filesystem::path& path) {
  return from_document(detail::read_json_file(path, kMaxFileBytes), path.string());
}

}  // namespace brick::graph
