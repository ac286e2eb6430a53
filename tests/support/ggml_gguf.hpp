#pragma once
// ggml's own GGUF reader and writer, the gguf_* C API of the oracle's libggml-base.so, for
// cross-checks with Brick's: a file one writes the other reads, and the same content written by
// both is the same bytes. The C signatures are declared here as ggml's gguf.h declares them.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brick/gguf/metadata.hpp"
#include "brick/gguf/tensor_info.hpp"

namespace brick::test {

class GgmlGguf {
 public:
  // A tensor as ggml holds it: its info (name, type, shape; offset and bytes as ggml reports
  // them) and its bytes.
  struct Tensor {
    gguf::TensorInfo info;
    std::vector<std::byte> data;
  };
  struct File {
    std::uint32_t version = 0;
    std::size_t alignment = 0;
    std::size_t data_offset = 0;
    gguf::Metadata metadata;
    std::vector<Tensor> tensors;
  };

  // Opens libggml-base.so from the oracle's folder (GgmlOracle::load(), whose IoError, saying how
  // to install the oracle, it passes on). ggml's log goes nowhere: refusing a file is expected of
  // it in these tests.
  static const GgmlGguf& load();

  GgmlGguf(const GgmlGguf&) = delete;
  GgmlGguf& operator=(const GgmlGguf&) = delete;

  // gguf_type_name, or "" for null.
  std::string type_name(gguf::ValueType type) const;

  // gguf_init_empty, gguf_set_val_* / gguf_set_arr_data / gguf_set_arr_str for each entry in
  // order, gguf_add_tensor for each tensor (a ggml tensor of info's type and shape holding data),
  // gguf_write_to_file. InvalidArgument for arrays of arrays (ggml has no setter for them),
  // StateError when ggml fails.
  void write(const std::filesystem::path& path, const gguf::Metadata& metadata,
             std::span<const Tensor> tensors) const;

  // gguf_init_from_file with the tensor data loaded into a ggml context; nothing when ggml refuses
  // the file.
  std::optional<File> read(const std::filesystem::path& path) const;

  // Whether gguf_init_from_buffer accepts the bytes (header, metadata and tensor infos; ggml does
  // not look at the data section here).
  bool accepts(std::span<const std::byte> bytes) const;

 private:
  GgmlGguf() = default;
};

}  // namespace brick::test
