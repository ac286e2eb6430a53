#include "brick/core/run_result.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace brick {

RunMetrics make_metrics(std::uint64_t tokens, std::uint64_t ns, double flops, double bytes,
                        double budget_us_per_token) noexcept {
  RunMetrics m;
  m.tokens = tokens;
  m.ns = ns;
  m.flops = flops;
  m.bytes = bytes;
  const double us = static_cast<double>(ns) / 1e3;
  const double seconds = static_cast<double>(ns) / 1e9;
  m.us_per_token = tokens > 0 ? us / static_cast<double>(tokens) : 0.0;
  m.tokens_per_second = seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
  m.budget_us_per_token = budget_us_per_token;
  m.budget_met = m.us_per_token <= budget_us_per_token;
  m.utilisation = budget_us_per_token > 0 ? m.us_per_token / budget_us_per_token : 0.0;
  m.gflops_per_second = ns > 0 ? flops / static_cast<double>(ns) : 0.0;
  m.gb_per_second = ns > 0 ? bytes / static_cast<double>(ns) : 0.0;
  return m;
}

bool RunReport::passed() const noexcept {
  return std::all_of(assertions.begin(), assertions.end(),
                     [](const AssertionOutcome& a) { return !a.evaluated || a.passed; });
}

std::string AssertionFailed::message() const {
  return fmt::format("brick '{}': assertion {} {}", brick, outcome.name, outcome.summary());
}

std::string BudgetExceeded::message() const {
  return fmt::format(
      "brick '{}': budget exceeded: {:.3f} us/token against a budget of {:.3f} "
      "({:.0f}% utilisation)",
      brick, actual_us, limit_us, utilisation * 100.0);
}

std::string message(const RunError& error) {
  return std::visit([](const auto& e) { return e.message(); }, error);
}

}  // namespace brick
