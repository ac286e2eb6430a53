#pragma once
// A checksum file: the checksum logs of one or more runs of a model on the same inputs (one run
// per backend, say), so that a run on another machine, compiler or version can be compared with
// them (find_divergence). JSON, schema "brick.checksums" version 1:
//
//   {"format": "brick.checksums", "version": 1, "model": "...", "prompt": [ids], "tokens": [ids],
//    "runs": [{"name": "scalar", "limit": N, "dropped": N,
//              "entries": [{"kernel", "layer", "token", "call", "hash": "0x...",
//                           "summary": {"count", "sum", "sum_squares", "min", "max", "nan", "inf"}}]}]}
//
// `tokens` are the ids fed after the prompt, which a later run forces to see the same inputs.
// Saving goes through AtomicFile; loading checks every field and throws a typed error.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "brick/graph/kernel_checksum.hpp"

namespace brick::graph {

struct ChecksumRun {
  std::string name;  // unique in the file: "scalar", "avx2"
  ChecksumLog log;
};

struct ChecksumFile {
  std::string model;                 // what ran (a model's name)
  std::vector<std::int32_t> prompt;  // its inputs
  std::vector<std::int32_t> tokens;
  std::vector<ChecksumRun> runs;

  // The run with this name, or null.
  const ChecksumRun* find(std::string_view run) const noexcept;
};

std::string to_json(const ChecksumFile& file);
// FormatError naming `what` and the field for anything that is not a valid file of this schema
// (runs with the same name included).
ChecksumFile checksum_file_from_json(std::string_view text, std::string_view what = "checksum file");

// Atomically (runtime/atomic_file.hpp); IoError when it cannot be written.
void save_checksums(const std::filesystem::path& path, const ChecksumFile& file);
// IoError when it cannot be read, CapacityError for a file over 512 MiB, FormatError as above.
ChecksumFile load_checksums(const std::filesystem::path& path);

}  // namespace brick::graph
