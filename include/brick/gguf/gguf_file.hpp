#pragma once
// A GGUF file (v2 or v3, little-endian), read without trusting a byte of it: every count, length,
// nesting depth, dimension, type id, offset and the alignment are checked against the bytes that
// are really there, with overflow-safe arithmetic, before they are used. A file that does not hold
// gives a FormatError naming what is wrong, the key or tensor at fault and its byte offset;
// nothing a file contains can make the reader crash, read outside the bytes or allocate more than
// a small multiple of the file's size.
//
// The rules are ggml's (gguf.cpp), so that a file Brick reads is one llama.cpp loads: version 2 or
// 3, non-empty unique keys, general.alignment a u32 power of two, unique tensor names of at most 63
// bytes, at most 4 dimensions whose element count fits an int64, a defined ggml type whose blocks
// tile ne[0], and tensors packed in file order, each at the first multiple of the alignment after
// the one before. Brick also refuses what ggml lets through: a bool byte other than 0 or 1 and
// tensor data past the end of the file. It reads one thing ggml does not: arrays of arrays, which
// the GGUF format defines (up to kMaxNesting deep).
//
// Metadata and tensor infos are parsed into memory; tensor data stays where it is (a view into the
// mapping, or into the caller's bytes for parse()).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "brick/gguf/metadata.hpp"
#include "brick/gguf/tensor_info.hpp"
#include "brick/runtime/memory/advice.hpp"
#include "brick/runtime/memory/mapped_file.hpp"

namespace brick::gguf {

inline constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
inline constexpr std::string_view kAlignmentKey = "general.alignment";  // u32, a power of two
inline constexpr std::size_t kDefaultAlignment = 32;   // GGUF_DEFAULT_ALIGNMENT
inline constexpr std::size_t kMaxNesting = 8;          // arrays of arrays deeper than this are refused

class GgufFile {
 public:
  // Maps `path` read-only and parses it. IoError when the file cannot be opened or mapped,
  // FormatError (with the path) when its contents are not a valid GGUF file.
  static GgufFile open(const std::filesystem::path& path, Advice advice = Advice::Normal);

  // Parses bytes the caller owns and keeps alive (a buffer, a fuzzer's input). `name` is used in
  // error messages.
  static GgufFile parse(std::span<const std::byte> bytes, std::string name = "<memory>");

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  ~GgufFile();

  const std::string& name() const noexcept { return name_; }
  std::uint32_t version() const noexcept { return version_; }
  std::size_t alignment() const noexcept { return alignment_; }
  // Offset of the data section from the start of the file: a multiple of alignment(), except in a
  // file without tensors that ends before that padding (ggml does not ask for it there), where it is
  // the file's size.
  std::size_t data_offset() const noexcept { return data_offset_; }
  std::size_t file_size() const noexcept { return bytes_.size(); }

  const Metadata& metadata() const noexcept { return metadata_; }
  std::span<const TensorInfo> tensors() const noexcept { return tensors_; }
  // The tensor called `name`, or null.
  const TensorInfo* find_tensor(std::string_view name) const noexcept;
  // The tensor called `name`; FormatError naming it when the file has none.
  const TensorInfo& tensor(std::string_view name) const;
  // The bytes of a tensor of this file (checked at parse time to lie inside it).
  std::span<const std::byte> tensor_data(const TensorInfo& tensor) const noexcept {
    return bytes_.subspan(data_offset_ + tensor.offset, tensor.bytes);
  }

  // The mapping, when the file was opened from a path (for access advice); null after parse().
  const MappedFile* mapping() const noexcept { return mapping_ ? &*mapping_ : nullptr; }

 private:
  GgufFile() = default;
  void parse_contents();

  std::optional<MappedFile> mapping_;
  std::span<const std::byte> bytes_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::size_t alignment_ = kDefaultAlignment;
  std::size_t data_offset_ = 0;
  Metadata metadata_;
  std::vector<TensorInfo> tensors_;
  // Views into tensors_' names: tensors_ is reserved in full before the first is added, so they
  // never move.
  std::unordered_map<std::string_view, std::size_t> tensor_index_;
};

}  // namespace brick::gguf
