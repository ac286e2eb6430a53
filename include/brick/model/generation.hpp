#pragma once
// Text generation with a LlamaDecoder, the way llama.cpp's examples drive a model: the prompt is
// evaluated, then each new token is sampled from the last logits and fed back, until n_predict
// tokens (or the stop token, usually end-of-sequence). Every token is reported as it is produced,
// so callers can stream it.
//
// Teacher forcing: with `force`, the i-th forced id is fed instead of the i-th sampled one, while
// the steps still record what the model predicted, so a run can be compared step by step with
// another engine's.
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "brick/core/layer_observer.hpp"
#include "brick/core/run_result.hpp"
#include "brick/model/llama_decoder.hpp"
#include "brick/model/sampler.hpp"

namespace brick::model {

struct GenerationParams {
  std::size_t n_predict = 32;
  SamplingParams sampling;
  std::vector<TokenId> force;  // fed instead of the sampled ids, in order
  std::size_t top_logits = 0;  // K: each step records its K highest raw logits
  TokenId stop_token =
      -1;  // generation ends once this id is produced (-1: never; not while forcing)
};

struct TopLogit {
  TokenId id = 0;
  float logit = 0.0f;
};

struct GenerationStep {
  TokenId predicted = 0;      // what the sampler chose from the step's logits
  TokenId fed = 0;            // what was appended (the forced id, or `predicted`)
  std::vector<TopLogit> top;  // highest logit first (ties: the lower id first)
};

struct GenerationTimings {
  double prompt_ms = 0.0;  // evaluating the prompt, up to the logits of its last token
  double decode_ms = 0.0;  // evaluating the generated tokens that were fed back
  double sample_ms = 0.0;  // choosing tokens
  std::size_t prompt_tokens = 0;
  std::size_t decoded_tokens = 0;  // evaluations after the prompt (n_predict - 1 when not stopped)

  double prompt_tokens_per_s() const noexcept {
    return prompt_ms > 0 ? 1e3 * prompt_tokens / prompt_ms : 0.0;
  }
  double decode_tokens_per_s() const noexcept {
    return decode_ms > 0 ? 1e3 * decoded_tokens / decode_ms : 0.0;
  }
};

struct Generation {
  std::vector<TokenId> prompt;
  std::vector<TokenId> generated;  // the ids fed after the prompt, in order
  std::vector<GenerationStep> steps;
  GenerationTimings timings;
};

// The K highest logits, highest first (ties: the lower id first); NaN never ranks.
std::vector<TopLogit> top_logits(std::span<const float> logits, std::size_t k);

// A decoder with a sampler: the choice of each token is a brick too (SamplingOp, seen by the
// observer as layer n_layer + 2), checked with the decoder's policy. When the decoder has a tracer
// (LlamaDecoder::set_tracer), each evaluation and the choice from its logits are one forward of it,
// which also records step i's logits (and the decoder's logit lens, when it computed one) with the
// token the sampler chose.
class Generator {
 public:
  // References the decoder. InvalidArgument for sampling parameters out of range.
  Generator(LlamaDecoder& decoder, const GenerationParams& params, const BrickPolicy& policy = {});
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // Runs `prompt` (at least one id, every id in the vocabulary: else InvalidArgument) from the
  // decoder's current position and generates params.n_predict tokens (0: the prompt only). The
  // decoder's context must hold the prompt and the fed tokens (else CapacityError before anything
  // runs). `on_token` sees every fed id as soon as it is chosen. A brick that fails under
  // OnFailure::Error stops the run and comes back as the error.
  Result<Generation> run(std::span<const TokenId> prompt,
                         const std::function<void(TokenId)>& on_token = {},
                         LayerObserver* observer = nullptr);

  // The checks run() makes before it starts: InvalidArgument or CapacityError as described there.
  void validate(std::span<const TokenId> prompt) const;

  // Every brick's assertions on its last call: the decoder's, then the sampler's.
  std::vector<VerifyReport> verify();

 private:
  struct Sampling;

  LlamaDecoder& decoder_;
  GenerationParams params_;
  std::unique_ptr<Sampling> sampling_;
};

// One run of a fresh Generator.
Result<Generation> generate(LlamaDecoder& decoder, std::span<const TokenId> prompt,
                            const GenerationParams& params,
                            const std::function<void(TokenId)>& on_token = {},
                            LayerObserver* observer = nullptr);

}  // namespace brick::model
