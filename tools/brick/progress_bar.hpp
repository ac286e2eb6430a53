#pragma once
// A one-line progress bar on stderr, redrawn in place, for commands that write large files. It
// draws only when stderr is a terminal (a log or a pipe gets no control characters) and at most
// every 100 ms; finish() ends the line.
#include <chrono>
#include <cstdint>
#include <string>

namespace brick::cli {

class ProgressBar {
 public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::uint64_t done, std::uint64_t total);
  void finish();

 private:
  void draw(std::uint64_t done, std::uint64_t total);

  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace brick::cli
