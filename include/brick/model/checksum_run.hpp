#pragma once
// A run of a llama model that checksums every brick output (graph/kernel_checksum.hpp), token by
// token, for comparing backends, machines or builds with find_divergence (graph/divergence.hpp):
// what `brick verify` runs.
//
// The reference run chooses each next token greedily (the highest logit; id 0 when no logit is a
// number); a candidate is teacher-forced on the reference's tokens, so that both evaluate the same
// ids at the same positions and their logs have the same keys even where a backend would have
// chosen differently.
// The prompt is evaluated in batches of up to 512 tokens (its rows are positions 0..n-1 in every
// brick), then one token per step. The bricks' checks are off: the checksums are the check.
#include <cstddef>
#include <vector>

#include "brick/core/backend.hpp"
#include "brick/graph/kernel_checksum.hpp"
#include "brick/graph/kernel_fault.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/vocab.hpp"
#include "brick/runtime/batch/thread_pool.hpp"
#include "brick/runtime/kv_cache/kv_cache.hpp"

namespace brick::model {

struct ChecksumRunParams {
  std::vector<TokenId> prompt;  // at least one id
  std::size_t n_predict = 8;    // tokens chosen after the prompt; all but the last are fed back
  // Fed instead of the greedy choices, in order (the reference's `tokens`); beyond its end the
  // choice is greedy.
  std::vector<TokenId> force = {};
  Backend backend = Backend::Scalar;
  KvType kv_type = KvType::F16;
  std::size_t checksum_limit = graph::ChecksumLog::kDefaultLimit;
  std::vector<graph::KernelFault> faults = {};  // test hooks (graph/kernel_fault.hpp)
};

struct ChecksumRun {
  Backend backend = Backend::Scalar;
  std::vector<TokenId> tokens;  // the n_predict ids chosen: forced or greedy
  graph::ChecksumLog log;
};

// InvalidArgument for an empty prompt or an id outside the vocabulary, CapacityError when the
// prompt and the tokens do not fit the model's context, BackendUnavailable for a backend the CPU
// cannot run.
ChecksumRun run_with_checksums(const LlamaModel& model, ThreadPool& pool, const ChecksumRunParams& params);

}  // namespace brick::model
