#pragma once
// The Google Benchmark flags that make a side-by-side comparison meaningful on a noisy machine:
// several repetitions, interleaved at random, unless the command line sets them itself.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace brick::bench {

// args (argv as given) with --benchmark_repetitions=`repetitions` and random interleaving added
// where the user did not give them; `storage` keeps the added strings alive while args is used.
inline void add_comparison_defaults(std::vector<char*>& args, std::vector<std::string>& storage, int repetitions) {
  const auto given = [&](const char* flag) {
    return std::any_of(args.begin() + 1, args.end(), [&](const char* a) { return std::strstr(a, flag) != nullptr; });
  };
  storage.reserve(2);
  if (!given("--benchmark_repetitions")) {
    args.push_back(storage.emplace_back("--benchmark_repetitions=" + std::to_string(repetitions)).data());
  }
  if (!given("--benchmark_enable_random_interleaving")) {
    args.push_back(storage.emplace_back("--benchmark_enable_random_interleaving=true").data());
  }
}

}  // namespace brick::bench
