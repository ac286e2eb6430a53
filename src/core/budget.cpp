#include "brick/core/budget.hpp"

#include <fmt/format.h>

#include <cmath>

#include "brick/core/error.hpp"

namespace brick {
namespace {

double require_positive(double value, const char* what) {
  if (!std::isfinite(value) || value <= 0.0) {
    throw InvalidArgument(fmt::format("{} must be finite and positive, got {}", what, value));
  }
  return value;
}

// A budget is read both ways (time per token and tokens per second, bandwidth and time per page):
// an input so small or so large that the other way overflows to infinity or underflows to 0 is
// refused, naming the input.
double require_both_ways(double converted, const char* converted_unit, double value, const char* what) {
  if (!std::isfinite(converted) || converted <= 0.0) {
    throw InvalidArgument(fmt::format("{} {} is out of range: it is {} {}", what, value, converted, converted_unit));
  }
  return converted;
}

std::size_t require_page(std::size_t page_bytes) {
  if (page_bytes == 0) throw InvalidArgument("page size must be positive, got 0 bytes");
  return page_bytes;
}

}  // namespace

TokenBudget TokenBudget::from_us_per_token(double us_per_token) {
  const char* what = "token budget (us/token)";
  require_both_ways(1e6 / require_positive(us_per_token, what), "tokens/s", us_per_token, what);
  return TokenBudget(us_per_token);
}

TokenBudget TokenBudget::from_tokens_per_second(double tokens_per_second) {
  const char* what = "token budget (tokens/s)";
  const double us_per_token = 1e6 / require_positive(tokens_per_second, what);
  return TokenBudget(require_both_ways(us_per_token, "us/token", tokens_per_second, what));
}

ByteBudget ByteBudget::from_gb_per_second(double gb_per_second, std::size_t page_bytes) {
  const char* what = "byte budget (GB/s)";
  const ByteBudget budget(require_positive(gb_per_second, what), require_page(page_bytes));
  require_both_ways(budget.us_per_page(), "us/page", gb_per_second, what);
  return budget;
}

ByteBudget ByteBudget::from_us_per_page(double us_per_page, std::size_t page_bytes) {
  const char* what = "byte budget (us/page)";
  const double us = require_positive(us_per_page, what);
  const double gb_per_second = static_cast<double>(require_page(page_bytes)) / (us * 1e3);
  return ByteBudget(require_both_ways(gb_per_second, "GB/s", us_per_page, what), page_bytes);
}

}  // namespace brick
