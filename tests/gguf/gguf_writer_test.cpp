// GgufWriter: the layout it writes, the input it refuses, and write()'s all-or-nothing promise.
#include "brick/gguf/gguf_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "gguf/error_message.hpp"
#include "gguf/gguf_bytes.hpp"
#include "gguf/sample_metadata.hpp"
#include "gguf/temp_folder.hpp"

namespace brick::gguf {
namespace {

using quant::TensorType;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <class F>
std::string invalid_argument_of(F&& f) {
  return test::message_of<InvalidArgument>(f);
}

// The bytes written for a small file, checked against the format byte by byte: what ggml's
// gguf_write_to_file lays out (header, metadata in order, tensor infos, padding, aligned data).
TEST(GgufWriter, LaysTheFileOutAsGgmlDoes) {
  Metadata m;
  m.set("general.architecture", "llama");
  m.set("llama.block_count", 2u);
  GgufWriter writer(m);
  const TensorInfo& a = writer.add_tensor("a", TensorType::F32, {3, 1});
  EXPECT_EQ(a.n_dims, 1u);  // ggml writes no trailing dimensions of 1
  EXPECT_EQ(a.offset, 0u);
  EXPECT_EQ(a.bytes, 12u);
  const TensorInfo& b = writer.add_tensor("b", TensorType::Q8_0, {32, 1, 2});
  EXPECT_EQ(b.n_dims, 3u);
  EXPECT_EQ(b.offset, 32u);
  EXPECT_EQ(b.bytes, 68u);

  test::GgufBytes expected;
  expected.header(3, 2, 2)
      .key_string("general.architecture", "llama")
      .key_value("llama.block_count", ValueType::U32, 2u)
      .tensor_info("a", {3}, TensorType::F32, 0)
      .tensor_info("b", {32, 1, 2}, TensorType::Q8_0, 32)
      .pad(32)
      .fill(12, std::byte{0x11})
      .pad(32)
      .fill(68, std::byte{0x22})
      .pad(32);
  const std::vector<std::byte> bytes = writer.to_bytes([](std::size_t i, std::span<std::byte> out) {
    std::memset(out.data(), i == 0 ? 0x11 : 0x22, out.size());
  });
  EXPECT_EQ(bytes, std::vector<std::byte>(expected.bytes().begin(), expected.bytes().end()));
  EXPECT_EQ(writer.file_size(), bytes.size());
}

TEST(GgufWriter, WritesTheSameBytesToAFileAsToMemory) {
  const test::TempFolder folder;
  GgufWriter writer(test::sample_metadata());
  writer.add_tensor("x", TensorType::Q6_K, {256, 2});
  writer.add_tensor("y", TensorType::BF16, {5});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> progress;
  writer.write(folder / "m.gguf", test::fill_pattern, [&](std::uint64_t done, std::uint64_t total) {
    progress.emplace_back(done, total);
  });
  const std::vector<std::byte> bytes = writer.to_bytes(test::fill_pattern);
  EXPECT_EQ(test::read_file(folder / "m.gguf"), bytes);
  ASSERT_EQ(progress.size(), 2u);
  EXPECT_LT(progress[0].first, progress[1].first);
  EXPECT_EQ(progress[1].first, bytes.size());
  EXPECT_EQ(progress[1].second, bytes.size());
  EXPECT_THAT(folder.entries(), ElementsAre("m.gguf"));
}

TEST(GgufWriter, BytesAFillerLeavesAloneAreZero) {
  GgufWriter writer;
  writer.add_tensor("w", TensorType::F32, {4});
  const std::vector<std::byte> bytes = writer.to_bytes([](std::size_t, std::span<std::byte>) {});
  const GgufFile file = GgufFile::parse(bytes);
  for (const std::byte b : file.tensor_data(file.tensors()[0])) EXPECT_EQ(b, std::byte{0});
}

TEST(GgufWriter, RefusesBadTensors) {
  GgufWriter writer;
  writer.add_tensor("taken", TensorType::F32, {4});
  const std::uint64_t big = std::uint64_t{1} << 40;
  EXPECT_THAT(invalid_argument_of([&] { writer.add_tensor("", TensorType::F32, {4}); }),
              HasSubstr("empty"));
  EXPECT_THAT(invalid_argument_of([&] { writer.add_tensor("taken", TensorType::F32, {4}); }),
              HasSubstr("'taken': a tensor of that name was added already"));
  EXPECT_THAT(
      invalid_argument_of([&] { writer.add_tensor(std::string(64, 'n'), TensorType::F32, {4}); }),
      HasSubstr("longer than ggml's 63 bytes"));
  EXPECT_NO_THROW(writer.add_tensor(std::string(63, 'n'), TensorType::F32, {4}));
  EXPECT_THAT(invalid_argument_of([&] {
                writer.add_tensor("w", TensorType::F32, std::span<const std::uint64_t>{});
              }),
              HasSubstr("0 dimensions"));
  EXPECT_THAT(invalid_argument_of([&] {
                writer.add_tensor("w", TensorType::F32, {1, 1, 1, 1, 1});
              }),
              HasSubstr("5 dimensions"));
  EXPECT_THAT(invalid_argument_of([&] {
                writer.add_tensor("w", TensorType::F32, {4, 0});
              }),
              HasSubstr("shape [4, 0] has a dimension of 0"));
  EXPECT_THAT(invalid_argument_of([&] { writer.add_tensor("w", TensorType::Q4_K, {128}); }),
              HasSubstr("ne[0] = 128 is not a whole number of 256-value q4_K blocks"));
  EXPECT_THAT(invalid_argument_of([&] { writer.add_tensor("w", static_cast<TensorType>(4), {4}); }),
              HasSubstr("4 is not a ggml type"));
  EXPECT_THAT(invalid_argument_of([&] {
                writer.add_tensor("w", TensorType::I8, {big, big});
              }),
              HasSubstr("more elements than an int64 counts"));
  EXPECT_THAT(invalid_argument_of([&] {
                writer.add_tensor("w", TensorType::F64, {big, std::uint64_t{1} << 22});
              }),
              HasSubstr("too large"));
  EXPECT_EQ(writer.tensors().size(), 2u);  // nothing refused was added
}

TEST(GgufWriter, RefusesABadAlignment) {
  for (const Value& alignment :
       {Value(0u), Value(48u), Value(std::int32_t{32}), Value(std::uint64_t{32})}) {
    Metadata m;
    m.set("general.alignment", alignment);
    EXPECT_THAT(invalid_argument_of([&] { GgufWriter{m}; }),
                HasSubstr("general.alignment must be a u32 power of two"))
        << alignment.to_string();
  }
  GgufWriter writer;
  writer.metadata().set("general.alignment", 3u);
  EXPECT_THROW(writer.to_bytes({}), InvalidArgument);
}

// The offsets are laid out when a tensor is added; once there are tensors the alignment is fixed.
TEST(GgufWriter, AlignmentCanChangeOnlyBeforeTheFirstTensor) {
  const test::TempFolder folder;
  GgufWriter writer;
  writer.metadata().set("general.alignment", 64u);
  EXPECT_EQ(writer.alignment(), 64u);
  writer.add_tensor("a", TensorType::F32, {1});
  EXPECT_EQ(writer.add_tensor("b", TensorType::F32, {1}).offset, 64u);
  writer.metadata().set("general.alignment", 128u);
  EXPECT_THAT(invalid_argument_of([&] { writer.file_size(); }),
              HasSubstr("changed from 64 to 128"));
  EXPECT_THROW(writer.to_bytes(test::fill_pattern), InvalidArgument);
  EXPECT_THROW(writer.add_tensor("c", TensorType::F32, {1}), InvalidArgument);
  EXPECT_THROW(writer.write(folder / "m.gguf", test::fill_pattern), InvalidArgument);
  EXPECT_TRUE(folder.entries().empty());
  writer.metadata().set("general.alignment", 64u);
  EXPECT_EQ(GgufFile::parse(writer.to_bytes(test::fill_pattern)).tensor("b").offset, 64u);
}

TEST(GgufWriter, RefusesArraysNestedDeeperThanTheReaderReads) {
  Array deep{std::vector<float>{1}};
  for (std::size_t depth = 1; depth <= kMaxNesting; ++depth) deep = Array{std::vector<Array>{deep}};
  Metadata m;
  m.set("deep", deep);
  EXPECT_THAT(invalid_argument_of([&] { GgufWriter(m).to_bytes({}); }),
              HasSubstr("key 'deep' holds arrays nested more than 8 deep"));
}

TEST(GgufWriter, AFillerThatThrowsLeavesNoFileBehind) {
  const test::TempFolder folder;
  GgufWriter writer;
  writer.add_tensor("a", TensorType::F32, {4});
  writer.add_tensor("b", TensorType::F32, {4});
  const auto fail_on_second = [](std::size_t i, std::span<std::byte>) {
    if (i == 1) throw std::runtime_error("no data for b");
  };
  EXPECT_THROW(writer.write(folder / "m.gguf", fail_on_second), std::runtime_error);
  EXPECT_TRUE(folder.entries().empty());
}

TEST(GgufWriter, AFailedWriteKeepsTheOldFile) {
  const test::TempFolder folder;
  const auto path = folder / "m.gguf";
  const std::vector<std::byte> old = {std::byte{'o'}, std::byte{'l'}, std::byte{'d'}};
  test::write_file(path, old);
  GgufWriter writer;
  writer.add_tensor("a", TensorType::F32, {4});
  EXPECT_THROW(writer.write(path, [](std::size_t,
                                     std::span<std::byte>) { throw std::runtime_error("stop"); }),
               std::runtime_error);
  EXPECT_EQ(test::read_file(path), old);
  EXPECT_THAT(folder.entries(), ElementsAre("m.gguf"));
  writer.write(path, test::fill_pattern);  // and a write that succeeds replaces it
  EXPECT_EQ(GgufFile::open(path).tensors().size(), 1u);
}

TEST(GgufWriter, AFolderThatCannotBeWrittenIsAnIoErrorWithTheErrnoText) {
  const test::TempFolder folder;
  const std::string message =
      test::message_of<IoError>([&] { GgufWriter().write(folder / "missing" / "m.gguf", {}); });
  EXPECT_THAT(message, HasSubstr("missing"));
  EXPECT_THAT(message, HasSubstr("No such file or directory"));
  test::write_file(folder / "file", {});
  EXPECT_THROW(GgufWriter().write(folder / "file" / "m.gguf", {}), IoError);
}

TEST(GgufWriter, ATargetThatCannotBeReplacedIsAnIoErrorAndLeavesNoTemporary) {
  const test::TempFolder folder;
  std::filesystem::create_directories(folder / "m.gguf" / "inside");
  const std::string message =
      test::message_of<IoError>([&] { GgufWriter().write(folder / "m.gguf", {}); });
  EXPECT_THAT(message, HasSubstr("is a directory"));
  EXPECT_THAT(message, HasSubstr("m.gguf"));
  EXPECT_THAT(folder.entries(), ElementsAre("m.gguf"));
  EXPECT_TRUE(std::filesystem::is_directory(folder / "m.gguf" / "inside"));
}

}  // namespace
}  // namespace brick::gguf
