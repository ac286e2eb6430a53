#include "brick/gguf/gguf_writer.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/runtime/atomic_file.hpp"
#include "gguf/byte_writer.hpp"
#include "gguf/tensor_layout.hpp"

namespace brick::gguf {
namespace {

constexpr std::uint32_t kVersion = 3;

}  // namespace

GgufWriter::GgufWriter(Metadata metadata) : metadata_(std::move(metadata)) {
  alignment();
}

std::size_t GgufWriter::alignment() const {
  const Value* value = metadata_.find_value(kAlignmentKey);
  if (value == nullptr) return kDefaultAlignment;
  const auto* alignment = value->get_if<std::uint32_t>();
  if (alignment == nullptr || !detail::is_power_of_two(*alignment)) {
    throw InvalidArgument(fmt::format("GgufWriter: {} must be a u32 power of two, is {} {}",
                                      kAlignmentKey, name(value->type()), value->to_string()));
  }
  if (!tensors_.empty() && *alignment != layout_alignment_) {
    throw InvalidArgument(
        fmt::format("GgufWriter: {} changed from {} to {} after tensors were added", kAlignmentKey,
                    layout_alignment_, *alignment));
  }
  return *alignment;
}

const TensorInfo& GgufWriter::add_tensor(std::string name, quant::TensorType type,
                                         std::span<const std::uint64_t> ne) {
  auto reject = [&](std::string_view problem) {
    throw InvalidArgument(fmt::format("GgufWriter::add_tensor '{}': {}", name, problem));
  };
  if (name.empty()) reject("the name is empty");
  if (name.size() > kMaxNameBytes)
    reject(fmt::format("the name is longer than ggml's {} bytes", kMaxNameBytes));
  if (names_.contains(name)) reject("a tensor of that name was added already");
  const auto traits = quant::tensor_type_traits(static_cast<std::uint32_t>(type));
  if (!traits) reject(fmt::format("{} is not a ggml type", static_cast<std::uint32_t>(type)));
  if (ne.empty() || ne.size() > kMaxDims)
    reject(fmt::format("{} dimensions, not 1 to {}", ne.size(), kMaxDims));

  TensorInfo tensor;
  tensor.type = type;
  std::copy(ne.begin(), ne.end(), tensor.ne.begin());
  const std::string shape = detail::shape_text(ne);
  if (std::find(ne.begin(), ne.end(), 0) != ne.end())
    reject(fmt::format("shape {} has a dimension of 0", shape));
  if (!detail::shape_fits_int64(tensor.ne))
    reject(fmt::format("shape {} has more elements than an int64 counts", shape));
  if (tensor.ne[0] % traits->block_values != 0) {
    reject(fmt::format("ne[0] = {} is not a whole number of {}-value {} blocks", tensor.ne[0],
                       traits->block_values, traits->name));
  }
  const std::size_t alignment = this->alignment();
  const std::optional<std::uint64_t> bytes = detail::tensor_bytes(type, tensor.ne);
  const std::optional<std::uint64_t> padded =
      bytes ? detail::align_up(*bytes, alignment) : std::nullopt;
  if (!padded || *padded > UINT64_MAX - data_bytes_)
    reject(fmt::format("a {} tensor of shape {} is too large", traits->name, shape));

  tensor.name = std::move(name);
  tensor.n_dims = detail::ggml_n_dims(tensor.ne);
  tensor.offset = data_bytes_;
  tensor.bytes = *bytes;
  data_bytes_ += *padded;
  layout_alignment_ = alignment;
  names_.insert(tensor.name);
  tensors_.push_back(std::move(tensor));
  return tensors_.back();
}

std::vector<std::byte> GgufWriter::header() const {
  const std::size_t alignment = this->alignment();
  detail::ByteWriter out;
  out.raw("GGUF", 4);
  out.number(kVersion);
  out.number(std::uint64_t{tensors_.size()});
  out.number(std::uint64_t{metadata_.size()});
  for (const auto& [key, value] : metadata_.entries()) {
    if (detail::nesting_depth(value) > kMaxNesting) {
      throw InvalidArgument(fmt::format(
          "GgufWriter: key '{}' holds arrays nested more than {} deep", key, kMaxNesting));
    }
    out.string(key);
    out.typed_value(value);
  }
  for (const TensorInfo& tensor : tensors_) out.tensor_info(tensor);
  out.pad(alignment);
  return std::move(out.bytes());
}

std::uint64_t GgufWriter::file_size() const {
  return header().size() + data_bytes_;
}

std::vector<std::byte> GgufWriter::to_bytes(const TensorFiller& fill) const {
  std::vector<std::byte> bytes = header();
  const std::size_t data_offset = bytes.size();
  bytes.resize(data_offset + data_bytes_);
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    fill(i, std::span(bytes).subspan(data_offset + tensors_[i].offset, tensors_[i].bytes));
  }
  return bytes;
}

void GgufWriter::write(const std::filesystem::path& path, const TensorFiller& fill,
                       const Progress& progress) const {
  const std::vector<std::byte> header = this->header();
  AtomicFile file(path);
  file.write(header);
  const std::uint64_t total = header.size() + data_bytes_;
  std::uint64_t done = header.size();
  // One tensor and its padding at a time; the buffer is cleared for each, so bytes a filler leaves
  // alone are zeros, as in to_bytes().
  std::vector<std::byte> buffer;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const std::uint64_t end = i + 1 < tensors_.size() ? tensors_[i + 1].offset : data_bytes_;
    buffer.assign(end - tensors_[i].offset, std::byte{0});
    fill(i, std::span(buffer).first(tensors_[i].bytes));
    file.write(buffer);
    done += buffer.size();
    if (progress) progress(done, total);
  }
  file.commit();
}

}  // namespace brick::gguf
