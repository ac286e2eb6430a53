// The README's library example, built by CI through add_subdirectory, find_package and pkg-config.
#include <brick/brick.hpp>

#include <cstdio>
#include <vector>

int main() {
  std::vector<float> x(4096, 0.5f), weight(4096, 1.0f), out(4096);
  auto norm = brick::ops::make_brick(brick::ops::RmsNormOp{});   // Equivalence vs Scalar + Finite
  auto result = norm.run({x, weight, 1e-6f}, out);               // metrics + checked assertions
  if (!result) std::puts(brick::message(result.error()).c_str()); // AssertionFailed / BudgetExceeded
  brick::VerifyReport report = norm.verify({x, weight, 1e-6f});  // every assertion, with numbers
  std::printf("consumer: %s on %s, %s\n", norm.name().c_str(), brick::name(norm.backend()).data(),
              report.passed() ? "verified" : "FAILED");
  return result && report.passed() ? 0 : 1;
}
