// RegularFile reads a file that may change underneath it without crashing, and refuses (without
// blocking) anything that is not a regular file; MappedFile refuses the same files the same way.
#include "brick/runtime/memory/regular_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/memory/mapped_file.hpp"
#include "runtime/child_process.hpp"

namespace brick {
namespace {

namespace fs = std::filesystem;

class RegularFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("brick_regular_file_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
    return path;
  }

  fs::path fifo() {
    const fs::path path = dir_ / "fifo";
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0) << std::strerror(errno);
    return path;
  }

  fs::path dir_;
};

std::string text_at(const RegularFile& file, std::size_t offset, std::size_t size) {
  std::string out(size, '\0');
  file.read_at(offset, std::as_writable_bytes(std::span(out.data(), out.size())));
  return out;
}

template <class Open>
std::string refusal_message(Open open) {
  try {
    open();
  } catch (const IoError& e) {
    return e.what();
  }
  return "accepted";
}

TEST_F(RegularFileTest, ReadsAnyRangeOfTheFile) {
  const RegularFile file(write("data.bin", "0123456789"));
  EXPECT_EQ(file.size(), 10u);
  EXPECT_EQ(text_at(file, 0, 10), "0123456789");
  EXPECT_EQ(text_at(file, 3, 4), "3456");
  EXPECT_EQ(text_at(file, 10, 0), "");
}

TEST_F(RegularFileTest, RangesOutsideTheFileAreInvalidArguments) {
  const RegularFile file(write("data.bin", "0123456789"));
  EXPECT_THROW(text_at(file, 8, 3), InvalidArgument);
  EXPECT_THROW(text_at(file, 11, 0), InvalidArgument);
  std::byte byte{};
  EXPECT_THROW(file.read_at(SIZE_MAX, std::span(&byte, 1)), InvalidArgument);
}

TEST_F(RegularFileTest, AFileTruncatedAfterOpeningIsAnIoErrorNotACrash) {
  const fs::path path = write("data.bin", std::string(100000, 'x'));
  const RegularFile file(path);
  fs::resize_file(path, 4096);
  EXPECT_EQ(text_at(file, 0, 10), std::string(10, 'x'));
  try {
    text_at(file, 0, file.size());
    FAIL() << "read past the new end of the file";
  } catch (const IoError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("data.bin"), std::string::npos) << message;
    EXPECT_NE(message.find("ends at byte 4096"), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
}

TEST_F(RegularFileTest, MissingFileIsAnIoErrorWithTheReason) {
  const std::string message = refusal_message([&] { RegularFile file(dir_ / "missing.bin"); });
  EXPECT_NE(message.find("missing.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST_F(RegularFileTest, DirectoriesAndDevicesAreRefusedByKind) {
  EXPECT_NE(refusal_message([&] { RegularFile file(dir_); }).find("it is a directory"), std::string::npos);
  EXPECT_NE(refusal_message([&] { RegularFile file("/dev/null"); }).find("it is a character device"),
            std::string::npos);
  EXPECT_NE(refusal_message([&] { MappedFile file(dir_); }).find("it is a directory"), std::string::npos);
  EXPECT_NE(refusal_message([&] { MappedFile file("/dev/zero"); }).find("it is a character device"),
            std::string::npos);
}

// A plain open() of a FIFO waits for a writer forever: each call runs in a child with a deadline.
TEST_F(RegularFileTest, AFifoIsRefusedWithoutBlocking) {
  const fs::path path = fifo();
  const auto refused_as_fifo = [&](auto open) {
    return [&, open] { return refusal_message(open).find("it is a FIFO") != std::string::npos ? 0 : 1; };
  };
  EXPECT_EQ(test::run_in_child(10, refused_as_fifo([&] { RegularFile file(path); })), "exit 0");
  EXPECT_EQ(test::run_in_child(10, refused_as_fifo([&] { MappedFile file(path); })), "exit 0");
}

}  // namespace
}  // namespace brick
