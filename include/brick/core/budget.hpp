#pragma once
// Performance budgets. A TokenBudget is a time allowance per token (or, equivalently, a throughput
// floor); a ByteBudget is a bandwidth floor (or, equivalently, a time allowance per memory page).
#include <cstddef>

namespace brick {

class TokenBudget {
 public:
  static constexpr double kDefaultUsPerToken = 50.0;

  constexpr TokenBudget() = default;

  // Both throw InvalidArgument unless the value is finite and positive and so is the other way of
  // reading it (1e-310 tokens/s would be an infinite time per token).
  static TokenBudget from_us_per_token(double us_per_token);
  static TokenBudget from_tokens_per_second(double tokens_per_second);

  constexpr double us_per_token() const noexcept { return us_per_token_; }
  constexpr double tokens_per_second() const noexcept { return 1e6 / us_per_token_; }

  // actual / budget: 0.5 means half the allowance was used, 2.0 means twice the allowance.
  constexpr double utilisation(double actual_us_per_token) const noexcept {
    return actual_us_per_token / us_per_token_;
  }
  constexpr bool met(double actual_us_per_token) const noexcept {
    return actual_us_per_token <= us_per_token_;
  }

 private:
  explicit constexpr TokenBudget(double us_per_token) : us_per_token_(us_per_token) {}
  double us_per_token_ = kDefaultUsPerToken;
};

class ByteBudget {
 public:
  static constexpr std::size_t kPageBytes = 4096;

  // Both throw InvalidArgument unless the values are finite and positive and so is the other way of
  // reading the budget (GB/s and µs per page).
  static ByteBudget from_gb_per_second(double gb_per_second, std::size_t page_bytes = kPageBytes);
  static ByteBudget from_us_per_page(double us_per_page, std::size_t page_bytes = kPageBytes);

  constexpr double gb_per_second() const noexcept { return gb_per_second_; }
  constexpr std::size_t page_bytes() const noexcept { return page_bytes_; }
  // One GB/s moves 1000 bytes per microsecond.
  constexpr double us_per_page() const noexcept {
    return static_cast<double>(page_bytes_) / (gb_per_second_ * 1e3);
  }

  // budget bandwidth / achieved bandwidth: above 1 means slower than the floor.
  constexpr double utilisation(double achieved_gb_per_second) const noexcept {
    return gb_per_second_ / achieved_gb_per_second;
  }
  constexpr bool met(double achieved_gb_per_second) const noexcept {
    return achieved_gb_per_second >= gb_per_second_;
  }

 private:
  constexpr ByteBudget(double gb_per_second, std::size_t page_bytes)
      : gb_per_second_(gb_per_second), page_bytes_(page_bytes) {}
  double gb_per_second_;
  std::size_t page_bytes_;
};

}  // namespace brick
