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

std::size_t require_page(std::size_t page_bytes) {
  if (page_bytes == 0) throw InvalidArgument("page size must be positive, got 0 bytes");
  return page_bytes;
}

}  // namespace

TokenBudget TokenBudget::from_us_per_token(double us_per_token) {
  return TokenBudget(require_positive(us_per_token, "token budget (us/token)"));
}

TokenBudget TokenBudget::from_tokens_per_second(double tokens_per_second) {
  return TokenBudget(1e6 / require_positive(tokens_per_second, "token budget (tokens/s)"));
}

ByteBudget ByteBudget::from_gb_per_second(double gb_per_second, std::size_t page_bytes) {
  return ByteBudget(require_positive(gb_per_second, "byte budget (GB/s)"),
                    require_page(page_bytes));
}

ByteBudget ByteBudget::from_us_per_page(double us_per_page, std::size_t page_bytes) {
  const double us = require_positive(us_per_page, "byte budget (us/page)");
  return ByteBudget(static_cast<double>(require_page(page_bytes)) / (us * 1e3), page_bytes);
}

}  // namespace brick
