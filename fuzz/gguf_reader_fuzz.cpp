// libFuzzer target for the GGUF reader: GgufFile::parse on any bytes. A FormatError is the only
// acceptable way to refuse them; any other exception, a crash, a read outside the input (ASan),
// undefined behaviour (UBSan), a leak, a slow input or an oversized allocation is a finding.
//
// A file that parses is walked in full (every metadata value rendered, every tensor's bytes read,
// every look-up checked against the lists), then written again by GgufWriter and read back: that
// second file, written once more, must give the same bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/gguf/gguf_writer.hpp"

namespace {

using brick::gguf::GgufFile;
using brick::gguf::GgufWriter;
using brick::gguf::TensorInfo;

// Larger alignments are valid, but re-writing a file would mean allocating that much padding.
constexpr std::size_t kMaxRewrittenAlignment = 1 << 16;

void require(bool condition) {
  if (!condition) std::abort();
}

void walk(const GgufFile& file) {
  for (const auto& [key, value] : file.metadata().entries()) {
    require(file.metadata().find_value(key) == &value);
    require(!value.to_string().empty());
  }
  for (const TensorInfo& tensor : file.tensors()) {
    require(file.find_tensor(tensor.name) == &tensor);
    require(tensor.offset % file.alignment() == 0);
    const std::span<const std::byte> data = file.tensor_data(tensor);
    require(data.size() == tensor.bytes);
    unsigned sum = 0;
    for (const std::byte b : data) sum += static_cast<unsigned>(b);
    require(sum <= 255 * data.size());
  }
}

// GgufWriter's bytes for what `file` holds, or nothing when the writer refuses it (it asks more
// of tensors than the reader: a name, at least one dimension, none of them 0).
std::optional<std::vector<std::byte>> rewrite(const GgufFile& file) {
  try {
    GgufWriter writer(file.metadata());
    for (const TensorInfo& tensor : file.tensors()) {
      writer.add_tensor(tensor.name, tensor.type, std::span(tensor.ne).first(tensor.n_dims));
    }
    return writer.to_bytes([&](std::size_t i, std::span<std::byte> out) {
      const std::span<const std::byte> data = file.tensor_data(file.tensors()[i]);
      require(data.size() == out.size());
      std::copy(data.begin(), data.end(), out.begin());
    });
  } catch (const brick::InvalidArgument&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::optional<GgufFile> file;
  try {
    file.emplace(GgufFile::parse(std::as_bytes(std::span(data, size)), "fuzz input"));
  } catch (const brick::FormatError&) {
    return 0;
  }
  walk(*file);
  if (file->alignment() > kMaxRewrittenAlignment) return 0;
  const std::optional<std::vector<std::byte>> first = rewrite(*file);
  if (!first) return 0;
  const GgufFile reread = GgufFile::parse(*first, "rewritten");
  walk(reread);
  require(reread.metadata().size() == file->metadata().size());
  require(reread.tensors().size() == file->tensors().size());
  const std::optional<std::vector<std::byte>> second = rewrite(reread);
  require(second && *second == *first);
  return 0;
}
