// The sampling brick: a pure function of logits, history and draw, so re-running it (its
// Equivalence assertion) gives the same token, and its id lies in the vocabulary.
#include "brick/model/sampling_op.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace brick::model {
namespace {

TEST(SamplingOp, TheSameDrawGivesTheSameTokenAndEveryAssertionHolds) {
  SamplingParams params;
  params.temperature = 0.8f;
  params.seed = 3;
  std::vector<float> logits(100);
  for (std::size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>((i * 37) % 23) * 0.1f;
  Sampler sampler(params, logits.size());
  auto brick = make_sampling_brick(sampler, logits.size());
  const std::vector<TokenId> history = {5, 6};
  std::vector<float> out(1);
  for (double draw : {0.0, 0.3, 0.999}) {
    const SamplingOp::Input input{logits, history, draw};
    ASSERT_TRUE(brick.run(input, out).has_value());
    EXPECT_EQ(static_cast<TokenId>(out[0]), sampler.sample(logits, history, draw));
    EXPECT_TRUE(brick.verify(input).passed());
  }
  // A small draw picks the most probable token, a large one a less probable one.
  ASSERT_TRUE(brick.run({logits, history, 0.0}, out).has_value());
  const auto first = static_cast<TokenId>(out[0]);
  ASSERT_TRUE(brick.run({logits, history, 0.999}, out).has_value());
  EXPECT_NE(static_cast<TokenId>(out[0]), first);
}

TEST(SamplingOp, GreedyIsTheArgmaxWhateverTheDraw) {
  Sampler sampler(SamplingParams{}, 4);
  auto brick = make_sampling_brick(sampler, 4);
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.5f};
  std::vector<float> out(1);
  for (double draw : {0.0, 0.7}) {
    ASSERT_TRUE(brick.run({logits, {}, draw}, out).has_value());
    EXPECT_EQ(out[0], 1.0f);
  }
}

}  // namespace
}  // namespace brick::model
