#pragma once
// BrickLayer: an ordered composition of bricks, run in order, with the composed budget, the
// throughput ceiling set by its slowest member, and that member's name (the bottleneck).
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "brick/core/compute_brick.hpp"
#include "brick/core/layer_observer.hpp"
#include "brick/core/run_result.hpp"

namespace brick {

// Views into the layer and its bricks, like RunReport: valid until the layer runs again.
struct LayerReport {
  std::string_view layer;
  std::span<const RunReport> members;  // in run order
  std::uint64_t total_ns = 0;
  double us_per_token = 0.0;                   // sum over members
  double throughput_ceiling_tokens_per_s = 0;  // 1e6 / the slowest member's µs per token
  std::string_view bottleneck;                 // name of the slowest member
  bool budget_met = true;                      // every member met its budget
};

class BrickLayer {
 public:
  explicit BrickLayer(std::string name) : name_(std::move(name)) {}

  const std::string& name() const noexcept { return name_; }
  std::size_t size() const noexcept { return members_.size(); }

  // Appends a member. The brick, the input and the output buffer are referenced, not copied: they
  // must outlive the layer (inputs typically view the outputs of earlier members).
  template <BrickOp Op>
  BrickLayer& add(ComputeBrick<Op>& brick, const typename Op::Input& input,
                  std::span<float> output) {
    members_.push_back(Member{brick.name(), brick.id(), brick.budget().us_per_token(),
                              [&brick, &input, output] { return brick.run(input, output); }, output, nullptr});
    reports_.resize(members_.size());
    return *this;
  }

  // The same with the output read through a pointer at each run, so that its owner can point the
  // brick at another buffer, or resize the view, between runs (a batch of tokens, then one).
  template <BrickOp Op>
  BrickLayer& add(ComputeBrick<Op>& brick, const typename Op::Input& input, const std::span<float>* output) {
    members_.push_back(Member{brick.name(), brick.id(), brick.budget().us_per_token(),
                              [&brick, &input, output] { return brick.run(input, *output); }, {}, output});
    reports_.resize(members_.size());
    return *this;
  }

  // Sum of the members' budgets, µs per token.
  double budget_us_per_token() const noexcept;

  // Runs every member in order; stops at the first member that returns an error. Allocates nothing.
  // The observer, when given, sees the layer begin and end (as `layer_index`), every member before
  // and after it runs, and the output of every member that ran without an error.
  Result<LayerReport> run(LayerObserver* observer = nullptr, std::size_t layer_index = 0);

 private:
  struct Member {
    std::string name;
    BrickId id;
    double budget_us_per_token;
    std::function<Result<RunReport>()> run;
    std::span<float> output;                 // the output, unless it is read through
    const std::span<float>* output_pointer;  // this pointer at each run

    std::span<float> current_output() const noexcept { return output_pointer ? *output_pointer : output; }
  };

  std::string name_;
  std::vector<Member> members_;
  std::vector<RunReport> reports_;  // one per member, rewritten by each run
};

}  // namespace brick
