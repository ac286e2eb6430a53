#pragma once
// Picks the next token from a row of logits, the way llama.cpp's default sampler chain does:
// repetition penalty over the last tokens, then (unless greedy) top-k, top-p and min-p on the
// softmax of the penalised logits, temperature, and a draw from the rest with a seeded generator.
// Temperature 0 (or below) is greedy: the first highest logit. One Sampler serves one sequence;
// it allocates only when built.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "brick/model/vocab.hpp"

namespace brick::model {

struct SamplingParams {
  float temperature = 0.0f;  // <= 0: greedy
  std::size_t top_k = 40;    // 0: off
  float top_p = 0.95f;       // 1: off
  float min_p = 0.05f;       // 0: off
  float repeat_penalty = 1.0f;  // 1: off; a logit > 0 is divided by it, one <= 0 multiplied
  std::size_t repeat_last_n = 64;
  std::uint64_t seed = 0;

  // Throws InvalidArgument naming the parameter when one is out of range (NaN, top_p outside
  // (0, 1], min_p outside [0, 1], repeat_penalty <= 0).
  void validate() const;
};

class Sampler {
 public:
  Sampler(const SamplingParams& params, std::size_t vocab_size);

  // The next token for `logits` (vocab_size values, else InvalidArgument), given the tokens so far
  // (the last repeat_last_n of them are penalised). NaN logits never win.
  TokenId sample(std::span<const float> logits, std::span<const TokenId> history);

  // The same with the random draw given (uniform in [0, 1), see draw()): a pure function of its
  // arguments, so it can be re-run and checked.
  TokenId sample(std::span<const float> logits, std::span<const TokenId> history, double draw);

  // The next value of the seeded generator, uniform in [0, 1).
  double draw();

  const SamplingParams& params() const noexcept { return params_; }

 private:
  struct Candidate {
    TokenId id;
    float logit;
    float p;
  };

  SamplingParams params_;
  std::size_t vocab_size_;
  std::vector<Candidate> candidates_;
  std::vector<float> penalised_;
  std::vector<std::uint8_t> seen_;  // marks tokens already penalised in this call
  std::mt19937_64 rng_;
};

}  // namespace brick::model
