#include "brick/model/quantize_model.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <cstring>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/quant/quantize.hpp"

namespace brick::model {
namespace {

using gguf::TensorInfo;
using quant::TensorType;

// llama-quantize re-types only the weights of two or more dimensions.
bool is_weight_matrix(const TensorInfo& t) {
  return t.n_dims >= 2 && t.name.ends_with("weight");
}

}  // namespace

QuantizeReport quantize_model(const std::filesystem::path& in, const std::filesystem::path& out,
                              FileType type, ThreadPool& pool,
                              const gguf::GgufWriter::Progress& progress) {
  std::error_code same_error;
  if (std::filesystem::equivalent(in, out, same_error)) {
    throw InvalidArgument(fmt::format("quantize: {} is both the input and the output", in));
  }
  const gguf::GgufFile file = gguf::GgufFile::open(in, Advice::Sequential);
  const auto* architecture = file.metadata().find<std::string>("general.architecture");
  if (architecture == nullptr || *architecture != "llama") {
    throw FormatError(
        fmt::format("{}: general.architecture is {}; brick quantize types llama models",
                    file.name(), architecture ? fmt::format("'{}'", *architecture) : "missing"));
  }
  const std::size_t n_layer = file.metadata().get<std::uint32_t>("llama.block_count");
  const bool has_output = file.find_tensor("output.weight") != nullptr;

  gguf::Metadata metadata = file.metadata();
  metadata.set("general.file_type", static_cast<std::uint32_t>(type));
  metadata.set("general.quantization_version", std::uint32_t{2});
  gguf::GgufWriter writer(std::move(metadata));
  QuantizeReport report;
  std::vector<TensorType> source_types;
  for (const TensorInfo& t : file.tensors()) {
    TensorType target = t.type;
    if (is_weight_matrix(t))
      target = llama_tensor_type(type, t.name, t.n_dims, n_layer, has_output);
    if (target != t.type) {
      if (!quant::is_computable(t.type)) {
        throw FormatError(
            fmt::format("{}: tensor '{}' is {}; Brick cannot read its values to re-type it",
                        file.name(), t.name, quant::name(t.type)));
      }
      if (!quant::is_quantizable(target) || t.ne[0] % quant::traits(target).block_values != 0) {
        throw FormatError(fmt::format("{}: tensor '{}' ({} values per row) cannot be stored as {}",
                                      file.name(), t.name, t.ne[0], quant::name(target)));
      }
      ++report.quantized;
    }
    source_types.push_back(t.type);
    writer.add_tensor(t.name, target, std::span(t.ne.data(), t.n_dims));
  }
  report.tensors = file.tensors().size();
  report.bytes_in = file.file_size();
  report.bytes_out = writer.file_size();

  constexpr std::size_t kRowsPerChunk = 32;
  writer.write(
      out,
      [&](std::size_t index, std::span<std::byte> bytes) {
        const TensorInfo& source = file.tensors()[index];
        const TensorInfo& target = writer.tensors()[index];
        const std::span<const std::byte> data = file.tensor_data(source);
        if (source.type == target.type) {
          std::memcpy(bytes.data(), data.data(), bytes.size());
          return;
        }
        const std::size_t n_per_row = source.ne[0];
        const std::size_t rows = source.rows();
        const std::size_t in_row = data.size() / rows;
        const std::size_t out_row = bytes.size() / rows;
        pool.parallel_for(rows, [&](Range range, std::size_t) {
          thread_local std::vector<float> values;
          for (std::size_t first = range.begin; first < range.end; first += kRowsPerChunk) {
            const std::size_t count = std::min(kRowsPerChunk, range.end - first);
            values.resize(count * n_per_row);
            quant::dequantize(source.type, data.subspan(first * in_row, count * in_row), values);
            quant::quantize(target.type, values, n_per_row,
                            bytes.subspan(first * out_row, count * out_row));
          }
        });
      },
      progress);
  return report;
}

}  // namespace brick::model
