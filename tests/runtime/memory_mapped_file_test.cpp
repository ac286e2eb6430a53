#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/mapped_file.hpp"

namespace brick {
namespace {

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("brick_mapped_file_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::vector<char>& content) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    return path;
  }

  std::filesystem::path dir_;
};

TEST_F(MappedFileTest, MapsTheWholeFileReadOnly) {
  std::vector<char> content(3 * 4096 + 17);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31 + 7);
  const auto path = write("weights.bin", content);
  const MappedFile file(path, Advice::Sequential);
  ASSERT_EQ(file.size(), content.size());
  EXPECT_EQ(file.path(), path);
  EXPECT_EQ(std::memcmp(file.data(), content.data(), content.size()), 0);
  EXPECT_NO_THROW(file.advise(Advice::Random));
  EXPECT_NO_THROW(file.advise(4096, 100, Advice::WillNeed));
  EXPECT_NO_THROW(file.advise(content.size() - 1, 1, Advice::DontNeed));
  EXPECT_EQ(file.bytes()[5], static_cast<std::byte>(content[5]));  // still readable after the advice
}

TEST_F(MappedFileTest, EmptyFileIsAnEmptyMapping) {
  const MappedFile file(write("empty.bin", {}));
  EXPECT_EQ(file.size(), 0u);
  EXPECT_TRUE(file.bytes().empty());
  EXPECT_NO_THROW(file.advise(Advice::WillNeed));
}

TEST_F(MappedFileTest, IsMoveOnly) {
  static_assert(!std::is_copy_constructible_v<MappedFile>);
  MappedFile a(write("a.bin", {'x', 'y'}));
  const std::byte* data = a.data();
  MappedFile b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move)
  MappedFile c(write("c.bin", {'z'}));
  c = std::move(b);
  EXPECT_EQ(c.bytes()[1], std::byte{'y'});
}

TEST_F(MappedFileTest, MissingFileIsAnIoErrorNamingPathAndErrno) {
  const auto path = dir_ / "missing.bin";
  try {
    MappedFile file(path);
    FAIL();
  } catch (const IoError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("missing.bin"), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
}

TEST_F(MappedFileTest, DirectoryIsNotARegularFile) {
  EXPECT_THROW(MappedFile{dir_}, IoError);
}

TEST_F(MappedFileTest, AdviceOutsideTheFileIsInvalid) {
  const MappedFile file(write("small.bin", std::vector<char>(100, 'a')));
  EXPECT_THROW(file.advise(50, 51, Advice::WillNeed), InvalidArgument);
  EXPECT_THROW(file.advise(101, 0, Advice::WillNeed), InvalidArgument);
  EXPECT_THROW(file.advise(SIZE_MAX, 2, Advice::WillNeed), InvalidArgument);
  EXPECT_THROW(file.advise(0, 0, Advice::WillNeed), InvalidArgument);  // empty region
}

}  // namespace
}  // namespace brick
