#include "progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace brick::cli {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)),
      enabled_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(std::uint64_t done, std::uint64_t total) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(done, total);
}

void ProgressBar::draw(std::uint64_t done, std::uint64_t total) {
  constexpr int kWidth = 30;
  const double fraction =
      total == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  const int filled = static_cast<int>(fraction * kWidth);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  fmt::print(stderr, "\r{} [{:=<{}}{: <{}}] {:3.0f}%  {:.1f} / {:.1f} MB  {:.1f} s", label_, "",
             filled, "", kWidth - filled, 100.0 * fraction, static_cast<double>(done) / 1e6,
             static_cast<double>(total) / 1e6, seconds);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!enabled_ || !drawn_) return;
  fmt::print(stderr, "\n");
  drawn_ = false;
  enabled_ = false;
}

}  // namespace brick::cli
