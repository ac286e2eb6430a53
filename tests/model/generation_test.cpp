// generate(): greedy is the argmax of each step's logits, forced ids are fed while predictions are
// still reported, the stop token ends a run, and bad requests fail before anything runs.
#include "brick/model/generation.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "brick/core/error.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/synthetic_model.hpp"

namespace brick::model {
namespace {

namespace fs = std::filesystem;

class GenerationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = fs::temp_directory_path() / fmt::format("brick-generation-{}.gguf", getpid());
    SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");
    spec.type = FileType::Q8_0;
    spec.n_ctx = 64;
    ThreadPool pool(2);
    write_synthetic_model(spec, path_, pool);
    model_ = new LlamaModel(LlamaModel::open(path_));
  }
  static void TearDownTestSuite() {
    delete model_;
    fs::remove(path_);
  }

  LlamaDecoder decoder(std::size_t n_ctx = 64) {
    LlamaOptions options;
    options.n_ctx = n_ctx;
    return LlamaDecoder(model_->config(), model_->weights(), pool_, options);
  }

  static fs::path path_;
  static LlamaModel* model_;
  ThreadPool pool_{1};
};

fs::path GenerationTest::path_;
LlamaModel* GenerationTest::model_ = nullptr;

TEST_F(GenerationTest, GreedyFeedsBackTheArgmaxOfEveryStep) {
  const std::vector<TokenId> prompt = {1, 300, 301, 302};
  GenerationParams params;
  params.n_predict = 8;
  params.top_logits = 3;
  LlamaDecoder d = decoder();
  const auto run = generate(d, prompt, params);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->prompt, prompt);
  ASSERT_EQ(run->generated.size(), 8u);
  EXPECT_EQ(run->timings.prompt_tokens, prompt.size());
  EXPECT_EQ(run->timings.decoded_tokens, 7u);
  EXPECT_EQ(d.n_past(), prompt.size() + 7);

  LlamaDecoder manual = decoder();
  auto logits = manual.evaluate(prompt);
  for (std::size_t i = 0; i < run->generated.size(); ++i) {
    ASSERT_TRUE(logits.has_value());
    const auto best = std::max_element(logits->begin(), logits->end()) - logits->begin();
    EXPECT_EQ(run->generated[i], best) << i;
    EXPECT_EQ(run->steps[i].predicted, run->steps[i].fed);
    ASSERT_EQ(run->steps[i].top.size(), 3u);
    EXPECT_EQ(run->steps[i].top[0].id, best);
    EXPECT_GE(run->steps[i].top[0].logit, run->steps[i].top[1].logit);
    EXPECT_GE(run->steps[i].top[1].logit, run->steps[i].top[2].logit);
    logits = manual.step(run->generated[i]);
  }
}

TEST_F(GenerationTest, ForcedIdsAreFedAndPredictionsStillReported) {
  const std::vector<TokenId> prompt = {1, 400};
  GenerationParams greedy;
  greedy.n_predict = 6;
  LlamaDecoder a = decoder();
  const auto free_run = generate(a, prompt, greedy);
  GenerationParams forced = greedy;
  forced.force = {10, 11, 12};
  LlamaDecoder b = decoder();
  const auto run = generate(b, prompt, forced);
  ASSERT_TRUE(run.has_value() && free_run.has_value());
  EXPECT_EQ(std::vector<TokenId>(run->generated.begin(), run->generated.begin() + 3), forced.force);
  EXPECT_EQ(run->steps[0].predicted, free_run->steps[0].predicted);  // same context so far
  EXPECT_EQ(run->steps[3].fed, run->steps[3].predicted);             // forcing over, greedy again
}

TEST_F(GenerationTest, TheStopTokenEndsTheRun) {
  const std::vector<TokenId> prompt = {1, 500};
  GenerationParams params;
  params.n_predict = 5;
  LlamaDecoder a = decoder();
  const auto first = generate(a, prompt, params);
  ASSERT_TRUE(first.has_value());
  params.stop_token = first->generated[1];
  LlamaDecoder b = decoder();
  const auto stopped = generate(b, prompt, params);
  ASSERT_TRUE(stopped.has_value());
  EXPECT_LE(stopped->generated.size(), 2u);
  EXPECT_EQ(stopped->generated.back(), params.stop_token);
}

TEST_F(GenerationTest, BadRequestsFailBeforeAnythingRuns) {
  LlamaDecoder d = decoder(8);
  GenerationParams params;
  EXPECT_THROW((void)generate(d, {}, params), InvalidArgument);
  EXPECT_THROW((void)generate(d, std::vector<TokenId>{1, 99999}, params), InvalidArgument);
  params.force = {-1};
  EXPECT_THROW((void)generate(d, std::vector<TokenId>{1}, params), InvalidArgument);
  params.force.clear();
  params.n_predict = 9;  // 2 prompt tokens and 8 fed back: 10 positions of 8
  EXPECT_THROW((void)generate(d, std::vector<TokenId>{1, 2}, params), CapacityError);
  EXPECT_EQ(d.n_past(), 0u);
  params.n_predict = 7;  // 2 + 6 = 8 positions: exactly full
  EXPECT_TRUE(generate(d, std::vector<TokenId>{1, 2}, params).has_value());
  EXPECT_EQ(d.n_past(), 8u);
  params.n_predict = 1;
  EXPECT_THROW((void)generate(d, std::vector<TokenId>{1}, params), CapacityError);
  EXPECT_EQ(d.n_past(), 8u);
}

TEST_F(GenerationTest, ZeroTokensEvaluatesThePromptOnly) {
  LlamaDecoder d = decoder();
  GenerationParams params;
  params.n_predict = 0;
  const auto run = generate(d, std::vector<TokenId>{1, 2, 3}, params);
  ASSERT_TRUE(run.has_value());
  EXPECT_TRUE(run->generated.empty());
  EXPECT_EQ(d.n_past(), 3u);
}

TEST(TopLogits, HighestFirstTiesByIdAndNaNNeverRanks) {
  const std::vector<float> logits = {1.0f, std::nanf(""), 3.0f, 3.0f, -2.0f};
  const auto top = top_logits(logits, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].id, 2);
  EXPECT_EQ(top[1].id, 3);
  EXPECT_EQ(top[2].id, 0);
  EXPECT_EQ(top_logits(logits, 10).size(), 4u);
}

}  // namespace
}  // namespace brick::model
