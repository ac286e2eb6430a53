#include "brick/model/sampling_op.hpp"

namespace brick::model {

OpCost SamplingOp::cost(const Input& input) const noexcept {
  const auto n = static_cast<double>(input.logits.size());
  // The penalties and the greedy scan read every logit; top-k sorts, the softmaxes exponentiate.
  return OpCost{1, 4.0 * n, 4.0 * n + 4.0 * static_cast<double>(input.history.size())};
}

void SamplingOp::run(const Input& input, std::span<float> out, Backend) const {
  out[0] = static_cast<float>(sampler_->sample(input.logits, input.history, input.draw));
}

ComputeBrick<SamplingOp> make_sampling_brick(Sampler& sampler, std::size_t vocab_size,
                                             const BrickPolicy& policy) {
  return ComputeBrick<SamplingOp>(
      SamplingOp(sampler),
      {SamplingOp::equivalence(), Bounds{0.0f, static_cast<float>(vocab_size - 1)}},
      Backend::Scalar, {}, policy);
}

}  // namespace brick::model
