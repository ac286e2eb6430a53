#include "brick/model/generation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "brick/core/error.hpp"
#include "brick/model/sampling_op.hpp"
#include "brick/trace/forward_scope.hpp"

namespace brick::model {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The logit lens of the step (when the decoder computed one), then its logits, with the token the
// sampler chose.
void trace_logits(trace::ModelTracer& tracer, const LlamaDecoder& decoder, std::uint64_t step,
                  std::span<const float> logits, TokenId chosen) {
  const std::span<const float> lens = decoder.layer_logits();
  const std::size_t n_vocab = decoder.config().n_vocab;
  for (std::size_t layer = 0; layer < lens.size() / n_vocab; ++layer) {
    tracer.record_layer_logits(step, static_cast<std::uint32_t>(layer),
                               lens.subspan(layer * n_vocab, n_vocab), chosen);
  }
  tracer.record_logits(step, logits, chosen);
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

struct Generator::Sampling {
  Sampler sampler;
  std::vector<TokenId> history;  // the prompt and the fed tokens: what the penalties look back on
  SamplingOp::Input input;
  std::vector<float> chosen = std::vector<float>(1);
  ComputeBrick<SamplingOp> brick;
  BrickLayer layer{"sampling"};

  Sampling(const SamplingParams& params, std::size_t n_vocab, const BrickPolicy& policy)
      : sampler(params, n_vocab), brick(make_sampling_brick(sampler, n_vocab, policy)) {
    layer.add(brick, input, chosen);
  }
};

Generator::Generator(LlamaDecoder& decoder, const GenerationParams& params,
                     const BrickPolicy& policy)
    : decoder_(decoder),
      params_(params),
      sampling_(std::make_unique<Sampling>(params.sampling, decoder.config().n_vocab, policy)) {}

Generator::~Generator() = default;

void Generator::validate(std::span<const TokenId> prompt) const {
  const std::size_t n_vocab = decoder_.config().n_vocab;
  if (prompt.empty())
    throw InvalidArgument("generate: the prompt is empty; it needs at least one token");
  for (const TokenId id : prompt) {
    if (id < 0 || static_cast<std::size_t>(id) >= n_vocab) {
      throw InvalidArgument(
          fmt::format("generate: prompt token {} is outside the vocabulary of {}", id, n_vocab));
    }
  }
  for (const TokenId id : params_.force) {
    if (id < 0 || static_cast<std::size_t>(id) >= n_vocab) {
      throw InvalidArgument(
          fmt::format("generate: forced token {} is outside the vocabulary of {}", id, n_vocab));
    }
  }
  // The last generated token is never fed back, so n_predict tokens need n_predict - 1 positions.
  const std::size_t needed =
      decoder_.n_past() + prompt.size() + (params_.n_predict > 0 ? params_.n_predict - 1 : 0);
  if (needed > decoder_.n_ctx()) {
    throw CapacityError(
        fmt::format("generate: {} prompt tokens and {} to generate need {} positions; the context "
                    "holds {} ({} used)",
                    prompt.size(), params_.n_predict, needed, decoder_.n_ctx(), decoder_.n_past()));
  }
}

Result<Generation> Generator::run(std::span<const TokenId> prompt,
                                  const std::function<void(TokenId)>& on_token,
                                  LayerObserver* observer) {
  validate(prompt);
  Generation out;
  out.prompt.assign(prompt.begin(), prompt.end());
  Sampling& s = *sampling_;
  std::vector<TokenId>& history = s.history;
  history.insert(history.end(), prompt.begin(), prompt.end());

  // With a tracer, each evaluation and the sampling of its logits are one forward.
  trace::ModelTracer* tracer = decoder_.tracer();
  std::optional<trace::ForwardScope> forward;
  forward.emplace(tracer, static_cast<std::int64_t>(decoder_.n_past()));
  auto start = Clock::now();
  auto logits = decoder_.evaluate(prompt, observer);
  out.timings.prompt_ms = ms_since(start);
  out.timings.prompt_tokens = prompt.size();
  for (std::size_t i = 0; i < params_.n_predict; ++i) {
    if (!logits) return tl::make_unexpected(logits.error());
    start = Clock::now();
    s.input = {*logits, history, s.sampler.draw()};
    if (auto report = s.layer.run(observer, decoder_.config().n_layer + 2); !report) {
      return tl::make_unexpected(report.error());
    }
    GenerationStep step;
    step.predicted = static_cast<TokenId>(s.chosen[0]);
    if (params_.top_logits > 0) step.top = top_logits(*logits, params_.top_logits);
    const bool forced = i < params_.force.size();
    step.fed = forced ? params_.force[i] : step.predicted;
    out.timings.sample_ms += ms_since(start);
    if (tracer) trace_logits(*tracer, decoder_, i, *logits, step.predicted);
    forward.reset();
    out.generated.push_back(step.fed);
    history.push_back(step.fed);
    out.steps.push_back(std::move(step));
    if (on_token) on_token(out.generated.back());
    if (i + 1 == params_.n_predict ||
        (params_.force.empty() && out.generated.back() == params_.stop_token))
      break;
    forward.emplace(tracer, static_cast<std::int64_t>(decoder_.n_past()));
    start = Clock::now();
    logits = decoder_.evaluate(std::span(&out.generated.back(), 1), observer);
    out.timings.decode_ms += ms_since(start);
    ++out.timings.decoded_tokens;
  }
  if (!logits) return tl::make_unexpected(logits.error());
  return out;
}

std::vector<VerifyReport> Generator::verify() {
  std::vector<VerifyReport> reports = decoder_.verify();
  if (!sampling_->input.logits.empty())
    reports.push_back(sampling_->brick.verify(sampling_->input));
  return reports;
}

Result<Generation> generate(LlamaDecoder& decoder, std::span<const TokenId> prompt,
                            const GenerationParams& params,
                            const std::function<void(TokenId)>& on_token, LayerObserver* observer) {
  Generator generator(decoder, params);
  return generator.run(prompt, on_token, observer);
}

}  // namespace brick::model
