#pragma once
// Choosing the next token as a brick: the sampler's choice for a row of logits, with the random
// draw made beforehand (Sampler::draw), so the op is a pure function of its input and can be re-run
// against the reference. The output is the chosen id as one float (exact: ids stay below 2^24).
#include <cstddef>
#include <span>
#include <string>

#include "brick/core/assertion.hpp"
#include "brick/core/backend.hpp"
#include "brick/core/compute_brick.hpp"
#include "brick/core/op.hpp"
#include "brick/model/sampler.hpp"
#include "brick/ops/op_identity.hpp"

namespace brick::model {

class SamplingOp : public ops::OpIdentity {
 public:
  struct Input {
    std::span<const float> logits;
    std::span<const TokenId> history;
    double draw = 0.0;
  };

  // References the sampler; the caller keeps it alive.
  explicit SamplingOp(Sampler& sampler, std::string label = "sampling")
      : OpIdentity(BrickId::Sampling, std::move(label)), sampler_(&sampler) {}

  std::size_t output_size(const Input&) const noexcept { return 1; }
  OpCost cost(const Input& input) const noexcept;
  void run(const Input& input, std::span<float> out, Backend backend) const;
  // One code path for every backend: the same token.
  static Equivalence equivalence() noexcept { return {Backend::Scalar, 0.0, 0.0}; }

 private:
  Sampler* sampler_;
};

static_assert(BrickOp<SamplingOp>);

// A sampling brick: the same token on a re-run, and an id inside the vocabulary.
ComputeBrick<SamplingOp> make_sampling_brick(Sampler& sampler, std::size_t vocab_size,
                                             const BrickPolicy& policy = {});

}  // namespace brick::model
