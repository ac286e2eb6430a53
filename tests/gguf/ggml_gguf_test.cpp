// Brick's GGUF reader and writer against ggml's own (the oracle's libggml-base.so): each reads what
// the other writes, the same content gives the same bytes, and every file ggml refuses Brick
// refuses too. Like every oracle test these fail, saying how to install the oracle, when it is
// missing.
#include "support/ggml_gguf.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/gguf/gguf_writer.hpp"
#include "gguf/error_message.hpp"
#include "gguf/sample_metadata.hpp"
#include "gguf/temp_folder.hpp"

namespace brick::gguf {
namespace {

using brick::test::GgmlGguf;
using quant::TensorType;

// Tensors of several types and shapes (trailing dimensions of 1 included), filled with
// fill_pattern, as a GgufWriter adds them.
GgufWriter sample_writer(const Metadata& metadata) {
  GgufWriter writer(metadata);
  writer.add_tensor("token_embd.weight", TensorType::Q6_K, {256, 3});
  writer.add_tensor("output_norm.weight", TensorType::F32, {5, 1});
  writer.add_tensor("blk.0.ffn_up.weight", TensorType::Q4_0, {64, 2, 1, 3});
  writer.add_tensor("blk.0.attn_k.weight", TensorType::BF16, {3, 7});
  writer.add_tensor("rope_freqs.weight", TensorType::I32, {1});
  return writer;
}

std::vector<GgmlGguf::Tensor> tensors_of(const GgufWriter& writer) {
  std::vector<GgmlGguf::Tensor> tensors;
  for (std::size_t i = 0; i < writer.tensors().size(); ++i) {
    GgmlGguf::Tensor tensor{writer.tensors()[i], std::vector<std::byte>(writer.tensors()[i].bytes)};
    test::fill_pattern(i, tensor.data);
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

// What Brick read, as ggml reports it (ggml gives every shape all four dimensions).
void expect_same_tensors(const GgufFile& brick, const std::vector<GgmlGguf::Tensor>& ggml) {
  ASSERT_EQ(brick.tensors().size(), ggml.size());
  for (std::size_t i = 0; i < ggml.size(); ++i) {
    const TensorInfo& ours = brick.tensors()[i];
    const TensorInfo& theirs = ggml[i].info;
    EXPECT_EQ(ours.name, theirs.name);
    EXPECT_EQ(ours.type, theirs.type) << ours.name;
    EXPECT_EQ(ours.ne, theirs.ne) << ours.name;
    EXPECT_EQ(ours.offset, theirs.offset) << ours.name;
    EXPECT_EQ(ours.bytes, theirs.bytes) << ours.name;
    const std::span<const std::byte> data = brick.tensor_data(ours);
    ASSERT_EQ(data.size(), ggml[i].data.size()) << ours.name;
    EXPECT_EQ(std::memcmp(data.data(), ggml[i].data.data(), data.size()), 0) << ours.name;
  }
}

TEST(GgmlGguf, TypeNamesAreGgmls) {
  const GgmlGguf& ggml = GgmlGguf::load();
  for (std::uint32_t id = 0; id < kValueTypeCount; ++id) {
    const auto type = static_cast<ValueType>(id);
    EXPECT_EQ(name(type), ggml.type_name(type)) << id;
  }
}

TEST(GgmlGguf, BrickReadsWhatGgmlWrites) {
  const GgmlGguf& ggml = GgmlGguf::load();
  const test::TempFolder folder;
  const Metadata metadata = test::flat_sample_metadata();
  const std::vector<GgmlGguf::Tensor> tensors = tensors_of(sample_writer(metadata));
  ggml.write(folder / "ggml.gguf", metadata, tensors);

  const GgufFile file = GgufFile::open(folder / "ggml.gguf");
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.metadata(), metadata);
  expect_same_tensors(file, tensors);
  const std::optional<GgmlGguf::File> theirs = ggml.read(folder / "ggml.gguf");
  ASSERT_TRUE(theirs);
  EXPECT_EQ(file.data_offset(), theirs->data_offset);
}

TEST(GgmlGguf, GgmlReadsWhatBrickWrites) {
  const GgmlGguf& ggml = GgmlGguf::load();
  const test::TempFolder folder;
  for (const std::uint32_t alignment : {32u, 64u, 8u}) {
    Metadata metadata = test::flat_sample_metadata();
    metadata.set("general.alignment", alignment);
    const GgufWriter writer = sample_writer(metadata);
    writer.write(folder / "brick.gguf", test::fill_pattern);

    const std::optional<GgmlGguf::File> theirs = ggml.read(folder / "brick.gguf");
    ASSERT_TRUE(theirs) << "ggml refused Brick's file (alignment " << alignment << ")";
    EXPECT_EQ(theirs->version, 3u);
    EXPECT_EQ(theirs->alignment, alignment);
    EXPECT_EQ(theirs->metadata, metadata);
    const GgufFile ours = GgufFile::open(folder / "brick.gguf");
    EXPECT_EQ(theirs->data_offset, ours.data_offset());
    expect_same_tensors(ours, theirs->tensors);
  }
}

TEST(GgmlGguf, BrickWritesTheBytesGgmlWrites) {
  const GgmlGguf& ggml = GgmlGguf::load();
  const test::TempFolder folder;
  const Metadata metadata = test::flat_sample_metadata();
  const GgufWriter writer = sample_writer(metadata);
  ggml.write(folder / "ggml.gguf", metadata, tensors_of(writer));
  writer.write(folder / "brick.gguf", test::fill_pattern);
  const std::vector<std::byte> expected = test::read_file(folder / "ggml.gguf");
  const std::vector<std::byte> actual = test::read_file(folder / "brick.gguf");
  ASSERT_EQ(actual.size(), expected.size());
  const auto mismatch = std::mismatch(actual.begin(), actual.end(), expected.begin());
  EXPECT_EQ(mismatch.first, actual.end())
      << "first difference at byte " << (mismatch.first - actual.begin());
  EXPECT_EQ(writer.to_bytes(test::fill_pattern), expected);

  // Metadata only, no tensors: ggml pads the header to the alignment all the same.
  ggml.write(folder / "ggml_empty.gguf", metadata, {});
  EXPECT_EQ(GgufWriter(metadata).to_bytes({}), test::read_file(folder / "ggml_empty.gguf"));
}

// ggml's writer lays tensors out with the alignment its context had when it was created (32 for
// gguf_init_empty), even after general.alignment was set to another: the file it writes then says
// 64 but is laid out for 32, and ggml's reader refuses it. So does Brick's, naming the first tensor
// out of place. (Brick's writer lays out with the alignment the metadata says.)
TEST(GgmlGguf, GgmlsWriterIgnoresAnAlignmentSetLater) {
  const GgmlGguf& ggml = GgmlGguf::load();
  const test::TempFolder folder;
  Metadata metadata;
  metadata.set("general.alignment", 64u);
  const std::vector<GgmlGguf::Tensor> tensors = tensors_of(sample_writer(metadata));
  ggml.write(folder / "ggml.gguf", metadata, tensors);
  EXPECT_FALSE(ggml.read(folder / "ggml.gguf"));
  const std::string message =
      test::message_of<FormatError>([&] { GgufFile::open(folder / "ggml.gguf"); });
  EXPECT_NE(message.find("tensor 'blk.0.ffn_up.weight'"), std::string::npos) << message;
}

// Damage a valid file at random (bytes, counts, lengths, type ids, offsets) and cut it short: every
// file ggml refuses, Brick refuses too. Brick reads more than ggml in one respect, arrays of arrays
// (which the GGUF format allows and ggml does not read), so a damaged type id that makes one is
// not counted against it.
TEST(GgmlGguf, BrickRefusesEveryFileGgmlRefuses) {
  const GgmlGguf& ggml = GgmlGguf::load();
  GgufWriter writer(test::flat_sample_metadata());
  writer.add_tensor("a", TensorType::Q8_0, {32, 2});
  writer.add_tensor("b", TensorType::F32, {8});
  const std::vector<std::byte> valid = writer.to_bytes(test::fill_pattern);
  ASSERT_TRUE(ggml.accepts(valid));

  std::mt19937_64 random(20240611);
  std::size_t refused_by_ggml = 0;
  auto check = [&](std::span<const std::byte> bytes, const std::string& what) {
    if (ggml.accepts(bytes)) return;
    ++refused_by_ggml;
    try {
      const GgufFile file = GgufFile::parse(bytes, "mutant.gguf");
      bool nested = false;
      for (const auto& [key, value] : file.metadata().entries()) {
        const Array* array = value.get_if<Array>();
        nested = nested || (array != nullptr && array->element_type() == ValueType::Array);
      }
      EXPECT_TRUE(nested) << "ggml refuses, Brick accepts: " << what;
    } catch (const FormatError&) {
    }
  };
  for (std::size_t size = 0; size < valid.size(); ++size)
    check(std::span(valid).first(size), "a prefix");
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<std::byte> bytes = valid;
    const std::size_t at = random() % bytes.size();
    std::string what;
    switch (random() % 4) {
      case 0:  // one byte
        bytes[at] = static_cast<std::byte>(random());
        what = fmt::format("byte {} set", at);
        break;
      case 1:  // a small number over a u32 or u64 field
        bytes[at] = static_cast<std::byte>(random() % 16);
        for (std::size_t i = at + 1; i < std::min(bytes.size(), at + 4); ++i)
          bytes[i] = std::byte{0};
        what = fmt::format("small number at {}", at);
        break;
      case 2:  // a huge number
        for (std::size_t i = at; i < std::min(bytes.size(), at + 8); ++i)
          bytes[i] = std::byte{0xFF};
        what = fmt::format("0xFF.. at {}", at);
        break;
      default:  // a bit
        bytes[at] ^= static_cast<std::byte>(1u << (random() % 8));
        what = fmt::format("bit flipped at {}", at);
        break;
    }
    check(bytes, what);
  }
  EXPECT_GT(refused_by_ggml, 5000u);  // the damage reached what ggml checks
}

}  // namespace
}  // namespace brick::gguf
