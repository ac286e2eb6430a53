// AtomicFile: a target is replaced whole or not at all, never through a symlink, and an
// uncommitted writer leaves nothing behind.
#include "brick/runtime/atomic_file.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "brick/core/error.hpp"

namespace brick {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("brick-atomic-{}-{}", getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }

  fs::path dir_;
};

TEST_F(AtomicFileTest, CommitReplacesTheTargetWhole) {
  const fs::path target = dir_ / "out.txt";
  write_file_atomically(target, "old");
  write_file_atomically(target, "new contents");
  EXPECT_EQ(read(target), "new contents");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, AnUncommittedWriterLeavesTheOldFileAndNoTemporary) {
  const fs::path target = dir_ / "out.txt";
  write_file_atomically(target, "old");
  {
    AtomicFile file(target);
    file.write("half of the new");
  }
  EXPECT_EQ(read(target), "old");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, ASymlinkAtTheTargetIsReplacedNotFollowed) {
  const fs::path victim = dir_ / "victim.txt";
  write_file_atomically(victim, "precious");
  const fs::path target = dir_ / "link.txt";
  fs::create_symlink(victim, target);
  write_file_atomically(target, "written");
  EXPECT_EQ(read(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(read(target), "written");
}

TEST_F(AtomicFileTest, BadTargetsAreIoErrorsWithTheReason) {
  try {
    write_file_atomically(dir_ / "missing" / "out.txt", "x");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(write_file_atomically(dir_, "x"), IoError);
  EXPECT_THROW(write_file_atomically("", "x"), InvalidArgument);
  AtomicFile file(dir_ / "twice.txt");
  file.commit();
  EXPECT_THROW(file.commit(), StateError);
  EXPECT_THROW(file.write("late"), StateError);
}

}  // namespace
}  // namespace brick
