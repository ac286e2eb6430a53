#include "brick/gguf/gguf_file.hpp"

#include <fmt/format.h>
#include <fmt/std.h>

#include <algorithm>
#include <cstring>

#include "brick/core/error.hpp"
#include "gguf/byte_cursor.hpp"
#include "gguf/tensor_layout.hpp"
#include "gguf/value_reader.hpp"

namespace brick::gguf {
namespace {

using detail::ByteCursor;

// The fewest bytes a key-value pair can take (a key of one byte, a type, a one-byte value) and a
// tensor info (an empty name, no dimensions, a type and an offset): a count claiming more entries
// than the rest of the file can hold at that size is refused before anything is allocated.
constexpr std::size_t kMinKeyValueBytes = 8 + 1 + 4 + 1;
constexpr std::size_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

void read_magic_and_version(ByteCursor& in, std::uint32_t& version) {
  const std::span<const std::byte> magic = in.take(4, "the magic number");
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    std::string shown;
    for (const std::byte b : magic) {
      const auto c = static_cast<unsigned char>(b);
      shown += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
    }
    in.fail(0, fmt::format("magic is '{}', not 'GGUF': not a GGUF file", shown));
  }
  version = in.read<std::uint32_t>();
  if (version == 2 || version == 3) return;
  if (version == 1) in.fail(4, "GGUF version 1 is not supported (only 2 and 3 are)");
  if (version != 0 && (version & 0xFFFF) == 0) {
    in.fail(4,
            fmt::format("version 0x{:08x} reads as a byte-swapped small number: a big-endian GGUF "
                        "file, which is not supported",
                        version));
  }
  in.fail(4, fmt::format("GGUF version {} is not supported (only 2 and 3 are)", version));
}

// The value of general.alignment: a u32 power of two, or the default when the key is absent.
std::size_t read_alignment(ByteCursor& in, const Metadata& metadata, std::size_t key_offset) {
  const Value* value = metadata.find_value(kAlignmentKey);
  if (value == nullptr) return kDefaultAlignment;
  in.set_subject(fmt::format("key '{}'", kAlignmentKey));
  const auto* alignment = value->get_if<std::uint32_t>();
  if (alignment == nullptr)
    in.fail(key_offset, fmt::format("must be a u32, is {}", name(value->type())));
  if (!detail::is_power_of_two(*alignment)) {
    in.fail(key_offset, fmt::format("alignment {} is not a power of two", *alignment));
  }
  return *alignment;
}

std::string shape_text(const TensorInfo& tensor) {
  return detail::shape_text(std::span(tensor.ne).first(tensor.n_dims));
}

}  // namespace

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::filesystem::path& path, Advice advice) {
  GgufFile file;
  file.mapping_.emplace(path, advice);
  file.bytes_ = file.mapping_->bytes();
  file.name_ = path.string();
  file.parse_contents();
  return file;
}

GgufFile GgufFile::parse(std::span<const std::byte> bytes, std::string name) {
  GgufFile file;
  file.bytes_ = bytes;
  file.name_ = std::move(name);
  file.parse_contents();
  return file;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const noexcept {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& GgufFile::tensor(std::string_view name) const {
  if (const TensorInfo* tensor = find_tensor(name)) return *tensor;
  throw FormatError(fmt::format("{}: has no tensor '{}'", name_, name));
}

void GgufFile::parse_contents() {
  ByteCursor in(bytes_, name_);
  read_magic_and_version(in, version_);
  const auto tensor_count = in.read<std::uint64_t>();
  const auto key_value_count = in.read<std::uint64_t>();
  in.require_room(key_value_count, kMinKeyValueBytes, "key-value pairs");
  in.require_room(tensor_count, kMinTensorInfoBytes, "tensor infos");

  std::size_t alignment_key_offset = 0;
  for (std::uint64_t i = 0; i < key_value_count; ++i) {
    const std::size_t offset = in.position();
    in.set_subject(fmt::format("key #{}", i));
    const std::string_view key = in.read_string();
    if (key.empty()) in.fail(offset, "the key is empty");
    in.set_subject(fmt::format("key '{}'", key));
    if (metadata_.contains(key)) in.fail(offset, "the key appears twice");
    if (key == kAlignmentKey) alignment_key_offset = offset;
    const ValueType type = detail::read_value_type(in);
    metadata_.set(std::string(key), detail::read_value(in, type));
  }
  alignment_ = read_alignment(in, metadata_, alignment_key_offset);

  // Where each tensor's offset field lies, for the messages of the layout checks below.
  std::vector<std::size_t> offset_fields;
  offset_fields.reserve(static_cast<std::size_t>(tensor_count));
  tensors_.reserve(static_cast<std::size_t>(tensor_count));
  for (std::uint64_t i = 0; i < tensor_count; ++i) {
    const std::size_t start = in.position();
    in.set_subject(fmt::format("tensor #{}", i));
    TensorInfo tensor;
    tensor.name = in.read_string();
    if (tensor.name.size() > kMaxNameBytes) {
      in.fail(start, fmt::format("the name is {} bytes, longer than ggml's {}", tensor.name.size(),
                                 kMaxNameBytes));
    }
    in.set_subject(fmt::format("tensor '{}'", tensor.name));
    if (tensor_index_.contains(tensor.name)) in.fail(start, "the tensor name appears twice");

    const std::size_t dims_offset = in.position();
    tensor.n_dims = in.read<std::uint32_t>();
    if (tensor.n_dims > kMaxDims) {
      in.fail(dims_offset,
              fmt::format("{} dimensions, more than ggml's {}", tensor.n_dims, kMaxDims));
    }
    in.read_into(std::span<std::uint64_t>(tensor.ne.data(), tensor.n_dims));
    if (!detail::shape_fits_int64(tensor.ne)) {
      in.fail(dims_offset,
              fmt::format("shape {} has more elements than an int64 counts", shape_text(tensor)));
    }

    const std::size_t type_offset = in.position();
    const auto type_id = in.read<std::uint32_t>();
    const std::optional<quant::TensorTypeTraits> traits = quant::tensor_type_traits(type_id);
    if (!traits) in.fail(type_offset, fmt::format("unknown ggml type {}", type_id));
    tensor.type = traits->type;
    if (tensor.ne[0] % traits->block_values != 0) {
      in.fail(dims_offset, fmt::format("ne[0] = {} is not a whole number of {}-value {} blocks",
                                       tensor.ne[0], traits->block_values, traits->name));
    }
    const std::optional<std::uint64_t> bytes = detail::tensor_bytes(tensor.type, tensor.ne);
    if (!bytes)
      in.fail(dims_offset, fmt::format("a {} tensor of shape {} has more bytes than a u64 counts",
                                       traits->name, shape_text(tensor)));
    tensor.bytes = *bytes;

    offset_fields.push_back(in.position());
    tensor.offset = in.read<std::uint64_t>();
    tensors_.push_back(std::move(tensor));
    tensor_index_.emplace(tensors_.back().name, tensors_.size() - 1);
  }

  // The data section starts at the next multiple of the alignment. ggml asks for that padding only
  // when there are tensors; a file without any may end right after its tensor infos.
  in.set_subject("data section");
  const std::optional<std::uint64_t> data_offset = detail::align_up(in.position(), alignment_);
  if (tensors_.empty()) {
    data_offset_ = std::min<std::uint64_t>(data_offset.value_or(bytes_.size()), bytes_.size());
    return;
  }
  if (!data_offset || *data_offset > bytes_.size()) {
    in.fail(in.position(),
            fmt::format("the data section, aligned to {} bytes, would start past the end of "
                        "the file ({} bytes)",
                        alignment_, bytes_.size()));
  }
  data_offset_ = static_cast<std::size_t>(*data_offset);

  // ggml lays tensors out in order, each at the first multiple of the alignment after the one
  // before, and refuses any other layout: so does this reader, saying what is wrong with it.
  const std::uint64_t data_bytes = bytes_.size() - data_offset_;
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TensorInfo& tensor = tensors_[i];
    in.set_subject(fmt::format("tensor '{}'", tensor.name));
    const std::size_t field = offset_fields[i];
    if (tensor.offset % alignment_ != 0) {
      in.fail(field, fmt::format("data offset {} is not a multiple of the alignment {}",
                                 tensor.offset, alignment_));
    }
    if (tensor.offset < expected) {
      in.fail(field, fmt::format("data at offset {} overlaps tensor '{}', which ends at {}",
                                 tensor.offset, tensors_[i - 1].name, expected));
    }
    if (tensor.offset > expected) {
      in.fail(field,
              fmt::format("data offset {} leaves a gap after the tensor before: ggml expects {}",
                          tensor.offset, expected));
    }
    if (tensor.offset > data_bytes || tensor.bytes > data_bytes - tensor.offset) {
      in.fail(field,
              fmt::format(
                  "data of {} bytes at offset {} (byte {} of the file) runs past the end of the "
                  "file ({} bytes)",
                  tensor.bytes, tensor.offset, data_offset_ + tensor.offset, bytes_.size()));
    }
    // Inside the file, so neither sum can overflow.
    expected = detail::align_up(tensor.offset + tensor.bytes, alignment_).value();
  }
}

}  // namespace brick::gguf
