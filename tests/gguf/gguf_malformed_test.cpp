// Files broken in one place, one test per kind of damage: each must give a FormatError naming the
// file, what is at fault (the header, a key or a tensor) and the byte where it lies. Valid files
// are built byte by byte (gguf_bytes.hpp) so that the offsets below are known exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/gguf/gguf_file.hpp"
#include "brick/gguf/gguf_writer.hpp"
#include "gguf/error_message.hpp"
#include "gguf/gguf_bytes.hpp"
#include "gguf/sample_metadata.hpp"

namespace brick::gguf {
namespace {

using quant::TensorType;
using test::GgufBytes;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr const char* kName = "broken.gguf";
constexpr std::size_t kAfterHeader = 24;  // magic, version, tensor count, key-value count

// The message of the FormatError that parsing `bytes` gives (a test failure when there is none or
// another exception escapes).
std::string parse_error(std::span<const std::byte> bytes) {
  return test::message_of<FormatError>([&] { GgufFile::parse(bytes, kName); });
}

// The message names the file, the subject at fault and the byte offset.
::testing::Matcher<std::string> names(const std::string& subject, std::size_t offset,
                                      const std::string& problem) {
  return AllOf(HasSubstr(kName), HasSubstr(subject),
               HasSubstr("at byte " + std::to_string(offset) + ":"), HasSubstr(problem));
}

TEST(GgufMalformed, BadMagic) {
  GgufBytes b;
  b.text("GGML").number(std::uint32_t{3}).number(std::uint64_t{0}).number(std::uint64_t{0});
  EXPECT_THAT(parse_error(b.bytes()), names("header", 0, "magic is 'GGML', not 'GGUF'"));
}

TEST(GgufMalformed, VersionsOtherThanTwoAndThree) {
  const struct {
    std::uint32_t version;
    const char* problem;
  } cases[] = {{1, "GGUF version 1 is not supported"},
               {0, "GGUF version 0 is not supported"},
               {4, "GGUF version 4 is not supported"},
               {0x03000000,
                "version 0x03000000 reads as a byte-swapped small number: a big-endian GGUF file"}};
  for (const auto& c : cases) {
    GgufBytes b;
    b.header(c.version, 0, 0);
    EXPECT_THAT(parse_error(b.bytes()), names("header", 4, c.problem));
  }
}

TEST(GgufMalformed, KeyValueCountTheFileCannotHold) {
  GgufBytes b;
  b.header(3, 0, std::numeric_limits<std::uint64_t>::max());
  EXPECT_THAT(parse_error(b.bytes()),
              names("header", kAfterHeader, "key-value pairs need at least"));
}

TEST(GgufMalformed, TensorCountTheFileCannotHold) {
  GgufBytes b;
  b.header(3, 1000, 0).fill(100, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()),
              names("header", kAfterHeader, "1000 tensor infos need at least 24 bytes"));
}

TEST(GgufMalformed, StringLongerThanTheFile) {
  GgufBytes b;
  b.header(3, 0, 1).number(std::uint64_t{1000}).text("general.name");
  EXPECT_THAT(parse_error(b.bytes()),
              names("key #0", kAfterHeader, "string of 1000 bytes does not fit"));
}

TEST(GgufMalformed, StringOverGgmlsLengthLimit) {
  GgufBytes b;
  b.header(3, 0, 1).number(std::uint64_t{1} << 40).text("general.name").fill(16, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()), names("key #0", kAfterHeader, "over the limit"));
}

TEST(GgufMalformed, EmptyKey) {
  GgufBytes b;
  b.header(3, 0, 1).key_value("", ValueType::U32, std::uint32_t{1});
  EXPECT_THAT(parse_error(b.bytes()), names("key #0", kAfterHeader, "the key is empty"));
}

TEST(GgufMalformed, DuplicateKey) {
  GgufBytes b;
  b.header(3, 0, 2).key_value("general.version", ValueType::U32, std::uint32_t{1});
  const std::size_t second = b.size();
  b.key_value("general.version", ValueType::U32, std::uint32_t{2});
  EXPECT_THAT(parse_error(b.bytes()), names("key 'general.version'", second, "appears twice"));
}

TEST(GgufMalformed, UnknownValueType) {
  GgufBytes b;
  b.header(3, 0, 1).string("general.odd");
  const std::size_t type = b.size();
  b.number(std::uint32_t{13}).number(std::uint32_t{0});
  EXPECT_THAT(parse_error(b.bytes()), names("key 'general.odd'", type, "unknown value type 13"));
}

TEST(GgufMalformed, UnknownArrayElementType) {
  GgufBytes b;
  b.header(3, 0, 1).string("general.odd").type(ValueType::Array);
  const std::size_t element_type = b.size();
  b.number(std::uint32_t{0xFFFFFFFF}).number(std::uint64_t{0});
  EXPECT_THAT(parse_error(b.bytes()),
              names("key 'general.odd'", element_type, "unknown value type 4294967295"));
}

TEST(GgufMalformed, ArrayLongerThanTheFile) {
  GgufBytes b;
  b.header(3, 0, 1).string("tokenizer.ggml.scores").type(ValueType::Array).type(ValueType::F32);
  b.number(std::uint64_t{1} << 28).fill(64, std::byte{0});
  const std::size_t elements = b.size() - 64;
  EXPECT_THAT(parse_error(b.bytes()),
              names("key 'tokenizer.ggml.scores'", elements,
                    "268435456 f32 elements need at least 4 bytes each, but only 64"));
}

TEST(GgufMalformed, ArrayOfStringsLongerThanTheFile) {
  GgufBytes b;
  b.header(3, 0, 1).string("tokenizer.ggml.tokens").type(ValueType::Array).type(ValueType::String);
  b.number(std::uint64_t{100}).string("a").string("b");
  EXPECT_THAT(parse_error(b.bytes()), HasSubstr("100 str elements need at least 8 bytes each"));
}

TEST(GgufMalformed, ArrayOverGgmlsElementLimit) {
  GgufBytes b;
  b.header(3, 0, 1).string("big").type(ValueType::Array);
  const std::size_t array = b.size();
  b.type(ValueType::U8).number(std::uint64_t{1} << 31);
  EXPECT_THAT(parse_error(b.bytes()), names("key 'big'", array, "over the limit"));
}

TEST(GgufMalformed, ArraysNestedTooDeep) {
  GgufBytes b;
  b.header(3, 0, 1).string("deep").type(ValueType::Array);
  std::vector<std::size_t> starts;
  for (std::size_t depth = 0; depth <= kMaxNesting; ++depth) {
    starts.push_back(b.size());
    b.type(ValueType::Array).number(std::uint64_t{1});
  }
  b.type(ValueType::U8).number(std::uint64_t{0});
  // Eight arrays deep is allowed; the ninth, inside the eighth, is refused where it starts.
  EXPECT_THAT(parse_error(b.bytes()),
              names("key 'deep'", starts[kMaxNesting], "nested more than 8 deep"));
}

TEST(GgufMalformed, BoolByteOtherThanZeroOrOne) {
  GgufBytes scalar;
  scalar.header(3, 0, 1).string("general.flag").type(ValueType::Bool);
  const std::size_t byte = scalar.size();
  scalar.number(std::uint8_t{2});
  EXPECT_THAT(parse_error(scalar.bytes()),
              names("key 'general.flag'", byte, "bool byte is 2, not 0 or 1"));

  GgufBytes array;
  array.header(3, 0, 1)
      .string("flags")
      .type(ValueType::Array)
      .type(ValueType::Bool)
      .number(std::uint64_t{3});
  const std::size_t third = array.size() + 2;
  array.number(std::uint8_t{1}).number(std::uint8_t{0}).number(std::uint8_t{255});
  EXPECT_THAT(parse_error(array.bytes()), names("key 'flags'", third, "bool byte is 255"));
}

TEST(GgufMalformed, AlignmentOfTheWrongType) {
  GgufBytes b;
  b.header(3, 0, 2).key_string("general.name", "x");
  const std::size_t key = b.size();
  b.key_value("general.alignment", ValueType::I32, std::int32_t{32});
  EXPECT_THAT(parse_error(b.bytes()),
              names("key 'general.alignment'", key, "must be a u32, is i32"));
}

TEST(GgufMalformed, AlignmentNotAPowerOfTwo) {
  for (const std::uint32_t alignment : {0u, 48u, 0xFFFFFFFFu}) {
    GgufBytes b;
    b.header(3, 0, 1).key_value("general.alignment", ValueType::U32, alignment);
    EXPECT_THAT(parse_error(b.bytes()),
                names("key 'general.alignment'", kAfterHeader,
                      "alignment " + std::to_string(alignment) + " is not a power of two"));
  }
}

TEST(GgufMalformed, TensorNameLongerThanGgmls) {
  GgufBytes b;
  b.header(3, 1, 0)
      .tensor_info(std::string(64, 'w'), {32}, TensorType::F32, 0)
      .pad(32)
      .fill(128, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()),
              names("tensor #0", kAfterHeader, "the name is 64 bytes, longer than ggml's 63"));
}

TEST(GgufMalformed, DuplicateTensorName) {
  GgufBytes b;
  b.header(3, 2, 0).tensor_info("w", {8}, TensorType::F32, 0);
  const std::size_t second = b.size();
  b.tensor_info("w", {8}, TensorType::F32, 32).pad(32).fill(64, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()), names("tensor 'w'", second, "appears twice"));
}

TEST(GgufMalformed, TooManyDimensions) {
  GgufBytes b;
  b.header(3, 1, 0)
      .tensor_info("w", {1, 1, 1, 1, 1}, TensorType::F32, 0)
      .pad(32)
      .fill(4, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()),
              names("tensor 'w'", kAfterHeader + 9, "5 dimensions, more than ggml's 4"));
}

// Shapes whose element or byte count ggml's int64 / size_t arithmetic cannot hold; the message
// points at the tensor's dimension count, where its shape starts.
TEST(GgufMalformed, ShapesTooLargeToCount) {
  const struct {
    std::vector<std::uint64_t> ne;
    TensorType type;
    const char* problem;
  } cases[] = {
      {{std::uint64_t{1} << 63}, TensorType::I8, "shape [9223372036854775808] has more elements"},
      {{1u << 31, 1u << 31, 4}, TensorType::I8, "shape [2147483648, 2147483648, 4] has more elements"},
      {{std::uint64_t{1} << 62}, TensorType::F64, "more bytes than a u64 counts"},
  };
  for (const auto& c : cases) {
    GgufBytes b;
    b.header(3, 1, 0).tensor_info("w", c.ne, c.type, 0).pad(32);
    EXPECT_THAT(parse_error(b.bytes()), names("tensor 'w'", kAfterHeader + 9, c.problem));
  }
}

TEST(GgufMalformed, UnknownGgmlType) {
  for (const std::uint32_t type : {4u, 31u, 99u}) {  // 4 was Q4_2, removed; 31 never defined
    GgufBytes b;
    b.header(3, 1, 0).string("w").number(std::uint32_t{1}).number(std::uint64_t{32});
    const std::size_t type_field = b.size();
    b.number(type).number(std::uint64_t{0}).pad(32).fill(128, std::byte{0});
    EXPECT_THAT(parse_error(b.bytes()),
                names("tensor 'w'", type_field, "unknown ggml type " + std::to_string(type)));
  }
}

TEST(GgufMalformed, RowNotAWholeNumberOfBlocks) {
  GgufBytes b;
  b.header(3, 1, 0).tensor_info("w", {33, 2}, TensorType::Q4_0, 0).pad(32).fill(128, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()),
              names("tensor 'w'", kAfterHeader + 9,
                    "ne[0] = 33 is not a whole number of 32-value q4_0 blocks"));
}

// Two f32 tensors, 'a' of `a_values` values at offset 0 and 'b' of 4 at `b_offset`, with data
// bytes for both; b_offset_field is where b's offset lies in the file.
struct TwoTensors {
  GgufBytes file;
  std::size_t b_offset_field = 0;
};

TwoTensors two_tensors(std::uint64_t a_values, std::uint64_t b_offset) {
  TwoTensors t;
  t.file.header(3, 2, 0)
      .tensor_info("a", {a_values}, TensorType::F32, 0)
      .tensor_info("b", {4}, TensorType::F32, b_offset);
  t.b_offset_field = t.file.size() - 8;
  t.file.pad(32).fill(256, std::byte{0});
  return t;
}

TEST(GgufMalformed, MisalignedTensorOffset) {
  const TwoTensors t = two_tensors(4, 16);
  EXPECT_THAT(parse_error(t.file.bytes()),
              names("tensor 'b'", t.b_offset_field,
                    "data offset 16 is not a multiple of the alignment 32"));
}

TEST(GgufMalformed, OverlappingTensorData) {
  const TwoTensors t = two_tensors(16, 32);
  EXPECT_THAT(parse_error(t.file.bytes()),
              names("tensor 'b'", t.b_offset_field, "overlaps tensor 'a', which ends at 64"));
}

TEST(GgufMalformed, GapBetweenTensors) {
  const TwoTensors t = two_tensors(4, 64);
  EXPECT_THAT(parse_error(t.file.bytes()), names("tensor 'b'", t.b_offset_field, "leaves a gap"));
}

TEST(GgufMalformed, TensorDataPastTheEndOfTheFile) {
  GgufBytes b;
  b.header(3, 1, 0).tensor_info("w", {100}, TensorType::F32, 0);
  const std::size_t offset_field = b.size() - 8;
  b.pad(32).fill(399, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()),
              names("tensor 'w'", offset_field, "data of 400 bytes at offset 0"));
  EXPECT_THAT(parse_error(b.bytes()), HasSubstr("runs past the end of the file"));
}

TEST(GgufMalformed, TensorOffsetFarPastTheEnd) {
  GgufBytes b;
  b.header(3, 1, 0).tensor_info("w", {1}, TensorType::F32,
                                std::numeric_limits<std::uint64_t>::max() - 31);
  b.pad(32).fill(4, std::byte{0});
  EXPECT_THAT(parse_error(b.bytes()), HasSubstr("tensor 'w'"));
}

TEST(GgufMalformed, DataSectionStartsPastTheEnd) {
  GgufBytes b;
  b.header(3, 1, 0).tensor_info("w", std::span<const std::uint64_t>{}, TensorType::F32, 0);
  const std::size_t end = b.size();
  EXPECT_THAT(parse_error(b.bytes()),
              names("data section", end, "would start past the end of the file"));
}

// Cut a valid file (every value type, tensors whose bytes end at the end of the file) anywhere:
// every prefix is refused with a FormatError, never a crash or another exception.
TEST(GgufMalformed, EveryTruncationIsRefused) {
  GgufWriter writer(test::sample_metadata());
  writer.add_tensor("a", TensorType::Q8_0, {32, 3});
  writer.add_tensor("b", TensorType::F32, {8});  // 32 bytes: no padding after the last tensor
  const std::vector<std::byte> bytes = writer.to_bytes(test::fill_pattern);
  ASSERT_NO_THROW(GgufFile::parse(bytes));
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    const std::string message = parse_error(std::span(bytes).first(size));
    ASSERT_THAT(message, HasSubstr(kName)) << "prefix of " << size << " bytes";
    ASSERT_THAT(message, HasSubstr("at byte ")) << "prefix of " << size << " bytes";
  }
}

}  // namespace
}  // namespace brick::gguf
