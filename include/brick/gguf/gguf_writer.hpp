#pragma once
// Writes GGUF v3 files that ggml's gguf reader and llama.cpp load: the metadata in insertion order,
// then the tensor infos, then each tensor's bytes at an aligned offset (general.alignment, 32 unless
// the metadata says otherwise), in the order the tensors were added.
//
//   GgufWriter writer(metadata);
//   writer.add_tensor("token_embd.weight", TensorType::Q4_K, {4096, 32000});
//   writer.write("model.gguf", [&](std::size_t i, std::span<std::byte> out) { /* fill tensor i */ });
//
// Tensor data comes from a callback, one tensor at a time, so a model larger than memory can be
// written. write() is atomic: the bytes go to a temporary file beside `path` that is renamed over
// it only when everything was written; on any error (or an exception from the callback) the
// temporary is removed and an existing file at `path` is left as it was.
//
// The bytes are those ggml's gguf_write_to_file writes for the same metadata and tensors. Offsets
// are laid out by add_tensor() with the alignment in force then: general.alignment can be set or
// changed freely before the first tensor is added, and after that write(), to_bytes() and
// file_size() refuse (InvalidArgument) a metadata whose alignment is no longer the one the tensors
// were laid out with. Arrays of arrays are written as the GGUF format defines them, but ggml's
// reader (and so llama.cpp) refuses them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "brick/gguf/metadata.hpp"
#include "brick/gguf/tensor_info.hpp"

namespace brick::gguf {

class GgufWriter {
 public:
  // Fills `out` (exactly the tensor's bytes) with tensor `index` (in add_tensor order).
  using TensorFiller = std::function<void(std::size_t index, std::span<std::byte> out)>;
  // Called after each tensor with the bytes written so far and the total (for progress bars).
  using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

  // InvalidArgument when general.alignment is present but not a u32 power of two.
  explicit GgufWriter(Metadata metadata = {});

  Metadata& metadata() noexcept { return metadata_; }
  const Metadata& metadata() const noexcept { return metadata_; }
  // general.alignment, or 32 without it; InvalidArgument when it is not a u32 power of two or
  // is no longer the alignment the tensors were laid out with.
  std::size_t alignment() const;

  // Adds a tensor of shape `ne` (ggml order, 1 to 4 dimensions) and returns its info (offset and
  // bytes filled in; n_dims as ggml writes it, without trailing dimensions of 1). InvalidArgument
  // for an empty or duplicate name, a name longer than ggml's GGML_MAX_NAME - 1 (63) bytes, a type
  // ggml does not define, a dimension of 0, ne[0] not a whole number of the type's blocks, a size
  // that overflows, or an invalid or changed general.alignment.
  const TensorInfo& add_tensor(std::string name, quant::TensorType type, std::span<const std::uint64_t> ne);
  const TensorInfo& add_tensor(std::string name, quant::TensorType type, std::initializer_list<std::uint64_t> ne) {
    return add_tensor(std::move(name), type, std::span<const std::uint64_t>(ne.begin(), ne.size()));
  }
  std::span<const TensorInfo> tensors() const noexcept { return tensors_; }

  // Bytes of the file write() produces.
  std::uint64_t file_size() const;

  // Writes the file atomically (see above). IoError with the errno text when a write fails;
  // InvalidArgument for metadata that cannot be written (see above, and arrays nested deeper than
  // kMaxNesting).
  void write(const std::filesystem::path& path, const TensorFiller& fill, const Progress& progress = {}) const;
  // The same bytes in memory (tests, fuzzer seeds).
  std::vector<std::byte> to_bytes(const TensorFiller& fill) const;

 private:
  // The header, metadata and tensor infos, padded to the alignment: everything before the data.
  std::vector<std::byte> header() const;

  Metadata metadata_;
  std::vector<TensorInfo> tensors_;
  std::unordered_set<std::string> names_;
  std::size_t layout_alignment_ = 0;  // the alignment the offsets were computed with
  std::uint64_t data_bytes_ = 0;      // every tensor, each padded to the alignment
};

}  // namespace brick::gguf
