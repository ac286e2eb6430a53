// Reading valid GGUF files: what the writer wrote (every value type, tensors of several types and
// shapes, other alignments), and v2/v3 files built byte by byte.
#include "brick/gguf/gguf_file.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_writer.hpp"
#include "gguf/error_message.hpp"
#include "gguf/gguf_bytes.hpp"
#include "gguf/sample_metadata.hpp"
#include "gguf/temp_folder.hpp"

namespace brick::gguf {
namespace {

using quant::TensorType;
using test::GgufBytes;

GgufWriter sample_writer(Metadata metadata = test::sample_metadata()) {
  GgufWriter writer(std::move(metadata));
  writer.add_tensor("token_embd.weight", TensorType::Q4_K, {256, 3});
  writer.add_tensor("blk.0.attn_norm.weight", TensorType::F32, {7});
  writer.add_tensor("blk.0.ffn_down.weight", TensorType::Q8_0, {64, 2, 3});
  writer.add_tensor("blk.0.attn_q.weight", TensorType::F16, {2, 3, 4, 5});
  return writer;
}

void expect_pattern(const GgufFile& file) {
  for (std::size_t i = 0; i < file.tensors().size(); ++i) {
    const TensorInfo& tensor = file.tensors()[i];
    std::vector<std::byte> expected(tensor.bytes);
    test::fill_pattern(i, expected);
    const std::span<const std::byte> data = file.tensor_data(tensor);
    ASSERT_EQ(data.size(), expected.size()) << tensor.name;
    EXPECT_EQ(std::memcmp(data.data(), expected.data(), expected.size()), 0) << tensor.name;
  }
}

TEST(GgufFile, RoundTripsEveryValueType) {
  const GgufWriter writer = sample_writer();
  const std::vector<std::byte> bytes = writer.to_bytes(test::fill_pattern);
  const GgufFile file = GgufFile::parse(bytes, "sample.gguf");
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.name(), "sample.gguf");
  EXPECT_EQ(file.metadata(), test::sample_metadata());
  EXPECT_EQ(file.file_size(), bytes.size());
  EXPECT_EQ(file.mapping(), nullptr);
}

TEST(GgufFile, RoundTripsNanAndNegativeZeroBitForBit) {
  Metadata m;
  const float nan = std::bit_cast<float>(0x7fc00123u);
  m.set("nan32", nan);
  m.set("nan64", std::bit_cast<double>(0xfff0000000000001ull));
  m.set("minus_zero", -0.0);
  const GgufFile file = GgufFile::parse(GgufWriter(m).to_bytes({}));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(file.metadata().get<float>("nan32")), 0x7fc00123u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(file.metadata().get<double>("nan64")),
            0xfff0000000000001ull);
  EXPECT_TRUE(std::signbit(file.metadata().get<double>("minus_zero")));
}

TEST(GgufFile, RoundTripsTensorsInfosAndBytes) {
  const GgufWriter writer = sample_writer();
  const std::vector<std::byte> bytes = writer.to_bytes(test::fill_pattern);
  const GgufFile file = GgufFile::parse(bytes);
  ASSERT_EQ(file.tensors().size(), writer.tensors().size());
  for (std::size_t i = 0; i < writer.tensors().size(); ++i)
    EXPECT_EQ(file.tensors()[i], writer.tensors()[i]);
  expect_pattern(file);

  const TensorInfo& q = file.tensor("blk.0.attn_q.weight");
  EXPECT_EQ(q.n_dims, 4u);
  EXPECT_EQ(q.elements(), 120u);
  EXPECT_EQ(q.rows(), 60u);
  EXPECT_EQ(q.bytes, 240u);
  const TensorInfo& embd = file.tensor("token_embd.weight");
  EXPECT_EQ(embd.type, TensorType::Q4_K);
  EXPECT_EQ(embd.bytes, 3u * 144u);
  EXPECT_EQ(embd.offset, 0u);
  EXPECT_EQ(file.find_tensor("output.weight"), nullptr);
  EXPECT_EQ(file.data_offset() % file.alignment(), 0u);
  EXPECT_EQ(file.alignment(), kDefaultAlignment);
}

TEST(GgufFile, MissingTensorNamesTheFileAndTheTensor) {
  const GgufFile file = GgufFile::parse(sample_writer().to_bytes(test::fill_pattern), "model.gguf");
  const std::string message = test::message_of<FormatError>([&] { file.tensor("output.weight"); });
  EXPECT_NE(message.find("model.gguf"), std::string::npos) << message;
  EXPECT_NE(message.find("'output.weight'"), std::string::npos) << message;
}

TEST(GgufFile, OpenMapsTheFileAndTensorDataIsAViewIntoTheMapping) {
  const test::TempFolder folder;
  const auto path = folder / "model.gguf";
  sample_writer().write(path, test::fill_pattern);
  GgufFile file = GgufFile::open(path, Advice::Sequential);
  EXPECT_EQ(file.name(), path.string());
  ASSERT_NE(file.mapping(), nullptr);
  EXPECT_EQ(file.metadata(), test::sample_metadata());
  expect_pattern(file);
  for (const TensorInfo& tensor : file.tensors()) {
    EXPECT_EQ(file.tensor_data(tensor).data(),
              file.mapping()->data() + file.data_offset() + tensor.offset);
  }
  // Moving the file keeps the views and the index valid.
  const GgufFile moved = std::move(file);
  EXPECT_EQ(moved.find_tensor("blk.0.attn_norm.weight"), &moved.tensors()[1]);
  expect_pattern(moved);
}

TEST(GgufFile, OpenOfAMissingFileIsAnIoError) {
  const test::TempFolder folder;
  EXPECT_THROW(GgufFile::open(folder / "absent.gguf"), IoError);
}

TEST(GgufFile, HonoursOtherAlignments) {
  for (const std::uint32_t alignment : {1u, 8u, 64u, 4096u}) {
    Metadata m;
    m.set("general.alignment", alignment);
    const std::vector<std::byte> bytes = sample_writer(m).to_bytes(test::fill_pattern);
    const GgufFile file = GgufFile::parse(bytes);
    EXPECT_EQ(file.alignment(), alignment);
    EXPECT_EQ(file.data_offset() % alignment, 0u);
    for (const TensorInfo& tensor : file.tensors())
      EXPECT_EQ(tensor.offset % alignment, 0u) << alignment;
    expect_pattern(file);
  }
}

TEST(GgufFile, AFileWithoutTensors) {
  Metadata m;
  m.set("general.name", "empty");
  const std::vector<std::byte> bytes = GgufWriter(m).to_bytes({});
  const GgufFile file = GgufFile::parse(bytes);
  EXPECT_TRUE(file.tensors().empty());
  EXPECT_EQ(file.data_offset(), bytes.size());
  // ggml needs no padding after the tensor infos of a file without tensors.
  GgufBytes unpadded;
  unpadded.header(3, 0, 0);
  const GgufFile bare = GgufFile::parse(unpadded.bytes());
  EXPECT_TRUE(bare.metadata().empty());
  EXPECT_EQ(bare.data_offset(), 24u);
}

// A v2 file has v3's layout (v3 only added big-endian files); built here byte by byte.
TEST(GgufFile, ReadsAHandBuiltVersion2File) {
  GgufBytes b;
  b.header(2, 2, 4)
      .key_string("general.architecture", "llama")
      .key_value("llama.block_count", ValueType::U32, std::uint32_t{2})
      .key_value("general.alignment", ValueType::U32, std::uint32_t{16})
      .string("tokenizer.ggml.scores")
      .type(ValueType::Array)
      .type(ValueType::F32)
      .number(std::uint64_t{2})
      .number(0.25f)
      .number(-1.5f)
      .tensor_info("a", {3}, TensorType::F32, 0)
      .tensor_info("b", {32, 2}, TensorType::Q8_0, 16)
      .pad(16);
  const std::size_t data_offset = b.size();
  b.fill(12, std::byte{0xAA}).fill(4, std::byte{0}).fill(68, std::byte{0xBB});

  const GgufFile file = GgufFile::parse(b.bytes(), "v2.gguf");
  EXPECT_EQ(file.version(), 2u);
  EXPECT_EQ(file.alignment(), 16u);
  EXPECT_EQ(file.data_offset(), data_offset);
  EXPECT_EQ(file.metadata().get<std::string>("general.architecture"), "llama");
  EXPECT_EQ(file.metadata().get<std::uint32_t>("llama.block_count"), 2u);
  const auto scores = file.metadata().get_array<float>("tokenizer.ggml.scores");
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_EQ(scores[1], -1.5f);
  ASSERT_EQ(file.tensors().size(), 2u);
  const TensorInfo& b_tensor = file.tensor("b");
  EXPECT_EQ(b_tensor.ne, (std::array<std::uint64_t, 4>{32, 2, 1, 1}));
  EXPECT_EQ(b_tensor.bytes, 68u);
  EXPECT_EQ(file.tensor_data(b_tensor)[67], std::byte{0xBB});
  EXPECT_EQ(file.tensor_data(file.tensor("a")).size(), 12u);
}

TEST(GgufFile, KeepsTheDimensionCountAFileGives) {
  GgufBytes b;
  b.header(3, 2, 0)
      .tensor_info("matrix_of_one_row", {8, 1}, TensorType::F32, 0)
      .tensor_info("scalar", std::span<const std::uint64_t>{}, TensorType::F32, 32)
      .pad(32)
      .fill(36, std::byte{1});
  const GgufFile file = GgufFile::parse(b.bytes());
  EXPECT_EQ(file.tensor("matrix_of_one_row").n_dims, 2u);
  EXPECT_EQ(file.tensor("scalar").n_dims, 0u);
  EXPECT_EQ(file.tensor("scalar").elements(), 1u);
  EXPECT_EQ(file.tensor("scalar").bytes, 4u);
}

// ggml reads tensors with a dimension of 0 (no bytes), and so does Brick.
TEST(GgufFile, ReadsATensorWithNoElements) {
  GgufBytes b;
  b.header(3, 2, 0)
      .tensor_info("empty", {0, 5}, TensorType::Q4_0, 0)
      .tensor_info("after", {1}, TensorType::F32, 0)
      .pad(32)
      .fill(4, std::byte{9});
  const GgufFile file = GgufFile::parse(b.bytes());
  EXPECT_EQ(file.tensor("empty").bytes, 0u);
  EXPECT_EQ(file.tensor_data(file.tensor("after"))[3], std::byte{9});
}

// Writers pad after the last tensor too, but ggml (and so Brick) does not ask for that padding.
TEST(GgufFile, ThePaddingAfterTheLastTensorIsOptional) {
  GgufBytes b;
  b.header(3, 1, 0).tensor_info("w", {3}, TensorType::F32, 0).pad(32).fill(12, std::byte{5});
  EXPECT_EQ(GgufFile::parse(b.bytes()).tensors()[0].bytes, 12u);
}

TEST(GgufFile, ReadsNestedArraysUpToTheNestingLimit) {
  Array deepest{std::vector<std::uint8_t>{42}};
  for (std::size_t depth = 1; depth < kMaxNesting; ++depth)
    deepest = Array{std::vector<Array>{deepest}};
  Metadata m;
  m.set("deep", deepest);
  const GgufFile file = GgufFile::parse(GgufWriter(m).to_bytes({}));
  EXPECT_EQ(file.metadata().get<Array>("deep"), deepest);
}

}  // namespace
}  // namespace brick::gguf
