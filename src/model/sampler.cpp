#include "brick/model/sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "brick/core/error.hpp"

namespace brick::model {

void SamplingParams::validate() const {
  if (std::isnan(temperature)) throw InvalidArgument("sampling: temperature is NaN");
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    throw InvalidArgument(fmt::format("sampling: top-p must be in (0, 1], got {}", top_p));
  }
  if (!(min_p >= 0.0f && min_p <= 1.0f)) {
    throw InvalidArgument(fmt::format("sampling: min-p must be in [0, 1], got {}", min_p));
  }
  if (!(repeat_penalty > 0.0f) || !std::isfinite(repeat_penalty)) {
    throw InvalidArgument(fmt::format("sampling: the repetition penalty must be positive and finite, got {}",
                                      repeat_penalty));
  }
}

Sampler::Sampler(const SamplingParams& params, std::size_t vocab_size)
    : params_(params), vocab_size_(vocab_size), rng_(params.seed) {
  params_.validate();
  if (vocab_size == 0) throw InvalidArgument("sampling: the vocabulary is empty");
  candidates_.reserve(vocab_size);
  penalised_.resize(vocab_size);
  seen_.assign(vocab_size, 0);
}

double Sampler::draw() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> history) {
  return sample(logits, history, draw());
}

TokenId Sampler::sample(std::span<const float> logits, std::span<const TokenId> history, double draw) {
  if (logits.size() != vocab_size_) {
    throw InvalidArgument(fmt::format("sampling: {} logits for a vocabulary of {}", logits.size(), vocab_size_));
  }
  std::span<const float> scores = logits;
  if (params_.repeat_penalty != 1.0f) {
    std::copy(logits.begin(), logits.end(), penalised_.begin());
    scores = penalised_;
    // Each distinct recent token is penalised once, as llama.cpp does.
    const auto recent = history.last(std::min(params_.repeat_last_n, history.size()));
    for (const TokenId id : recent) {
      if (id < 0 || static_cast<std::size_t>(id) >= vocab_size_ || seen_[static_cast<std::size_t>(id)]) continue;
      seen_[static_cast<std::size_t>(id)] = 1;
      float& logit = penalised_[static_cast<std::size_t>(id)];
      logit = logit > 0.0f ? logit / params_.repeat_penalty : logit * params_.repeat_penalty;
    }
    for (const TokenId id : recent) {
      if (id >= 0 && static_cast<std::size_t>(id) < vocab_size_) seen_[static_cast<std::size_t>(id)] = 0;
    }
  }

  if (params_.temperature <= 0.0f) {
    // The first highest score; a NaN compares false and never wins.
    std::size_t best = 0;
    float best_score = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < vocab_size_; ++i) {
      if (scores[i] > best_score) {
        best_score = scores[i];
        best = i;
      }
    }
    return static_cast<TokenId>(best);
  }

  candidates_.clear();
  for (std::size_t i = 0; i < vocab_size_; ++i) {
    if (!std::isnan(scores[i])) candidates_.push_back({static_cast<TokenId>(i), scores[i], 0.0f});
  }
  if (candidates_.empty()) return 0;
  const auto by_logit = [](const Candidate& a, const Candidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  std::size_t keep = candidates_.size();
  if (params_.top_k > 0 && params_.top_k < keep) {
    keep = params_.top_k;
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep), candidates_.end(),
                      by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  candidates_.resize(keep);

  // Softmax at temperature 1 for top-p and min-p.
  const auto softmax = [&](float scale) {
    const float max = candidates_.front().logit;
    double sum = 0.0;
    for (Candidate& c : candidates_) {
      c.p = std::exp((c.logit - max) * scale);
      sum += c.p;
    }
    for (Candidate& c : candidates_) c.p = static_cast<float>(c.p / sum);
  };
  softmax(1.0f);
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    std::size_t n = 0;
    while (n < candidates_.size()) {
      cumulative += candidates_[n++].p;
      if (cumulative >= params_.top_p) break;
    }
    candidates_.resize(n);
  }
  if (params_.min_p > 0.0f) {
    const float threshold = candidates_.front().p * params_.min_p;
    std::size_t n = 1;
    while (n < candidates_.size() && candidates_[n].p >= threshold) ++n;
    candidates_.resize(n);
  }
  softmax(1.0f / params_.temperature);
  double target = draw;
  for (const Candidate& c : candidates_) {
    target -= c.p;
    if (target <= 0.0) return c.id;
  }
  return candidates_.back().id;
}

}  // namespace brick::model
