#pragma once
// Re-types the tensors of a llama GGUF file the way llama-quantize does (without an importance
// matrix): each weight matrix gets the type llama_tensor_type() names for the file type and its
// bytes are those ggml_quantize_chunk writes for the tensor's values (dequantized first when the
// input is itself quantized); every other tensor, and a matrix already of its type, is copied.
// The metadata is carried over with general.file_type and general.quantization_version set.
#include <cstdint>
#include <filesystem>
#include <functional>

#include "brick/gguf/gguf_writer.hpp"
#include "brick/model/file_type.hpp"
#include "brick/runtime/batch/thread_pool.hpp"

namespace brick::model {

struct QuantizeReport {
  std::size_t tensors = 0;
  std::size_t quantized = 0;  // re-typed tensors (the rest were copied)
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
};

// Reads `in` and writes `out` atomically (an interrupted or failed run leaves no partial `out`).
// FormatError when `in` is not a llama GGUF or holds a matrix Brick cannot dequantize;
// InvalidArgument when `in` and `out` are the same file.
QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out,
                              FileType type, ThreadPool& pool,
                              const gguf::GgufWriter::Progress& progress = {});

}  // namespace brick::model
