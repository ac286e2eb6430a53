#include "brick/model/generation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "brick/core/error.hpp"

namespace brick::model {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

std::vector<TopLogit> top_logits(std::span<const float> logits, std::size_t k) {
  std::vector<TopLogit> all;
  all.reserve(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    if (!std::isnan(logits[i])) all.push_back({static_cast<TokenId>(i), logits[i]});
  }
  k = std::min(k, all.size());
  const auto higher = [](const TopLogit& a, const TopLogit& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(), higher);
  all.resize(k);
  return all;
}

Result<Generation> generate(LlamaDecoder& decoder, std::span<const TokenId> prompt, const GenerationParams& params,
                            const std::function<void(TokenId)>& on_token, LayerObserver* observer) {
  const std::size_t n_vocab = decoder.config().n_vocab;
  if (prompt.empty()) throw InvalidArgument("generate: the prompt is empty; it needs at least one token");
  for (const TokenId id : prompt) {
    if (id < 0 || static_cast<std::size_t>(id) >= n_vocab) {
      throw InvalidArgument(fmt::format("generate: prompt token {} is outside the vocabulary of {}", id, n_vocab));
    }
  }
  for (const TokenId id : params.force) {
    if (id < 0 || static_cast<std::size_t>(id) >= n_vocab) {
      throw InvalidArgument(fmt::format("generate: forced token {} is outside the vocabulary of {}", id, n_vocab));
    }
  }
  // The last generated token is never fed back, so n_predict tokens need n_predict - 1 positions.
  const std::size_t needed = decoder.n_past() + prompt.size() + (params.n_predict > 0 ? params.n_predict - 1 : 0);
  if (needed > decoder.n_ctx()) {
    throw CapacityError(fmt::format("generate: {} prompt tokens and {} to generate need {} positions; the context "
                                    "holds {} ({} used)",
                                    prompt.size(), params.n_predict, needed, decoder.n_ctx(), decoder.n_past()));
  }
  Sampler sampler(params.sampling, n_vocab);
  Generation out;
  out.prompt.assign(prompt.begin(), prompt.end());
  std::vector<TokenId> history(prompt.begin(), prompt.end());

  auto start = Clock::now();
  auto logits = decoder.evaluate(prompt, observer);
  out.timings.prompt_ms = ms_since(start);
  out.timings.prompt_tokens = prompt.size();
  for (std::size_t i = 0; i < params.n_predict; ++i) {
    if (!logits) return tl::make_unexpected(logits.error());
    start = Clock::now();
    GenerationStep step;
    step.predicted = sampler.sample(*logits, history);
    if (params.top_logits > 0) step.top = top_logits(*logits, params.top_logits);
    const bool forced = i < params.force.size();
    step.fed = forced ? params.force[i] : step.predicted;
    out.timings.sample_ms += ms_since(start);
    out.generated.push_back(step.fed);
    history.push_back(step.fed);
    out.steps.push_back(std::move(step));
    if (on_token) on_token(out.generated.back());
    if (i + 1 == params.n_predict || (params.force.empty() && out.generated.back() == params.stop_token)) break;
    start = Clock::now();
    logits = decoder.evaluate(std::span(&out.generated.back(), 1), observer);
    out.timings.decode_ms += ms_since(start);
    ++out.timings.decoded_tokens;
  }
  if (!logits) return tl::make_unexpected(logits.error());
  return out;
}

}  // namespace brick::model
