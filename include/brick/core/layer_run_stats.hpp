#pragma once
// Totals per member over many runs of a BrickLayer. Members that share a name (the attention bricks
// of every head, say) are merged into one row, in the order they first ran.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/core/brick_id.hpp"
#include "brick/core/brick_layer.hpp"

namespace brick {

struct MemberStats {
  std::string name;
  BrickId id = BrickId::COUNT;
  Backend backend = Backend::Scalar;
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t tokens = 0;
  double flops = 0.0;
  double bytes = 0.0;
  double budget_ns = 0.0;  // sum over calls of each call's budget for its tokens
  std::uint64_t assertions_checked = 0;
  std::uint64_t assertions_failed = 0;
  std::string first_failure;  // the first failing assertion's summary, if any

  double us_per_token() const noexcept;  // per call's tokens, over the run
  double tokens_per_second() const noexcept;
  double gb_per_second() const noexcept;
  double gflops_per_second() const noexcept;
  double budget_us_per_token() const noexcept;
  double utilisation() const noexcept;  // time spent / time budgeted
};

class LayerRunStats {
 public:
  void add(const LayerReport& report);

  std::span<const MemberStats> members() const noexcept { return members_; }
  std::uint64_t runs() const noexcept { return runs_; }
  std::uint64_t total_ns() const noexcept { return total_ns_; }

 private:
  std::vector<MemberStats> members_;
  std::uint64_t runs_ = 0;
  std::uint64_t total_ns_ = 0;
};

}  // namespace brick
