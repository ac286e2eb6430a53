#pragma once
// Runs the brick binary (BRICK_CLI) for the CLI tests, and the fixture that gives them a tiny model
// in a temporary folder of their own.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace brick::cli {

struct Outcome {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `brick ARGS` through the shell, with stderr captured in a file.
inline Outcome brick(const std::string& args) {
  namespace fs = std::filesystem;
  const fs::path err = fs::temp_directory_path() / fmt::format("brick-cli-{}.err", getpid());
  const std::string command = fmt::format("'{}' {} 2>'{}'", BRICK_CLI, args, err.string());
  Outcome o;
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    o.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err);
  o.err.assign(std::istreambuf_iterator<char>(in), {});
  fs::remove(err);
  return o;
}

// A tiny Q6_K model (two layers) in a folder of the suite's; the folder is the cache folder of the
// commands the suite runs, so that nothing lands in the user's.
class BrickCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = std::filesystem::temp_directory_path() / fmt::format("brick-cli-{}", getpid());
    std::filesystem::create_directories(folder_);
    setenv("XDG_CACHE_HOME", folder_.c_str(), 1);
    const Outcome gen =
        brick(fmt::format("gen-model '{}' --preset tiny --type q6_k --ctx 64", model().string()));
    ASSERT_EQ(gen.status, 0) << gen.err;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(folder_); }
  static std::filesystem::path model() { return folder_ / "tiny.gguf"; }
  static std::filesystem::path path(const std::string& name) { return folder_ / name; }

  static void expect_error(const std::string& args, const std::string& needle) {
    const Outcome o = brick(args);
    EXPECT_NE(o.status, 0) << args << "\n" << o.err;
    EXPECT_LT(o.status, 128) << args << " died of a signal\n" << o.err;
    EXPECT_NE(o.err.find(needle), std::string::npos) << args << "\nstderr: " << o.err;
  }

  static inline std::filesystem::path folder_;
};

}  // namespace brick::cli
