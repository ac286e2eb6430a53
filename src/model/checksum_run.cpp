#include "brick/model/checksum_run.hpp"

#include <fmt/format.h>

#include "brick/core/error.hpp"
#include "brick/graph/graph_recorder.hpp"
#include "brick/model/generation.hpp"
#include "brick/model/llama_decoder.hpp"

namespace brick::model {
namespace {

std::span<const float> logits_of(const Result<std::span<const float>>& logits) {
  // The checks are off (CheckPolicy::None): no brick can fail, so an error here is a bug.
  if (!logits) throw StateError(fmt::format("run_with_checksums: {}", message(logits.error())));
  return *logits;
}

}  // namespace

ChecksumRun run_with_checksums(const LlamaModel& model, ThreadPool& pool, const ChecksumRunParams& params) {
  if (params.prompt.empty()) throw InvalidArgument("run_with_checksums: the prompt is empty; it needs one token");
  const std::size_t positions = params.prompt.size() + (params.n_predict > 0 ? params.n_predict - 1 : 0);
  if (positions > model.config().n_ctx_train) {
    throw CapacityError(fmt::format("run_with_checksums: {} prompt tokens and {} more need {} positions; {} has {}",
                                    params.prompt.size(), params.n_predict, positions, model.name(),
                                    model.config().n_ctx_train));
  }
  LlamaOptions options;
  options.backend = params.backend;
  options.policy.checks = CheckPolicy::None;
  options.kv_type = params.kv_type;
  options.n_ctx = positions;
  LlamaDecoder decoder(model.config(), model.weights(), pool, options);
  graph::GraphRecorder recorder({.record_nodes = false,
                                 .record_checksums = true,
                                 .checksum_limit = params.checksum_limit,
                                 .faults = params.faults});
  ChecksumRun run;
  run.backend = decoder.backend();
  std::span<const float> logits = logits_of(decoder.evaluate(params.prompt, &recorder));
  for (std::size_t i = 0; i < params.n_predict; ++i) {
    TokenId next = 0;
    if (i < params.force.size()) {
      next = params.force[i];
    } else if (const auto best = top_logits(logits, 1); !best.empty()) {
      next = best.front().id;
    }
    run.tokens.push_back(next);
    if (i + 1 < params.n_predict) logits = logits_of(decoder.step(next, &recorder));
  }
  run.log = recorder.checksums();
  return run;
}

}  // namespace brick::model
