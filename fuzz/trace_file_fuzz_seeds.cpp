// Writes the trace reader fuzzer's seed corpus into the folder given as the only argument: traces a
// ModelTracer streams at each level, with every record kind, filters, a histogram, tracked tokens
// and an anomaly, so the fuzzer starts from inputs that reach every part of the reader.
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "brick/trace/forward_scope.hpp"
#include "brick/trace/model_tracer.hpp"
#include "seed_folder.hpp"

namespace {

using namespace brick::trace;

void record_forwards(ModelTracer& tracer) {
  std::vector<float> x(40), weights(9, 0.05f), logits(64);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i) - 2.0f;
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<float>(i % 7);
  weights[0] = 0.6f;
  for (std::int64_t pos = 0; pos < 3; ++pos) {
    ForwardScope forward(&tracer, pos);
    tracer.record_tensor("token_embd", x);
    tracer.record_activation(0, ActivationPoint::Input, x);
    tracer.record_activation(1, ActivationPoint::Output, x, x);
    tracer.record_attention(1, 2, pos, weights);
    tracer.record_layer_logits(static_cast<std::uint64_t>(pos), 0, logits, 3);
    tracer.record_logits(static_cast<std::uint64_t>(pos), logits, 3);
    tracer.record_quant_error("blk.0.qkv", 0, x, x);
    tracer.record_kv_cache(KvCacheState{static_cast<std::uint64_t>(pos), 16, 3, 3, 0, 1, 13, 0.0});
    if (pos == 2) {
      std::vector<float> bad = x;
      bad[1] = std::numeric_limits<float>::quiet_NaN();
      tracer.record_activation(1, ActivationPoint::AfterFfn, bad);
    }
  }
}

void save(const std::filesystem::path& path, TraceConfig config) {
  ModelTracer tracer(std::move(config));
  tracer.open_stream(path);
  record_forwards(tracer);
  tracer.close_stream();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<std::filesystem::path> given = brick::fuzz::seed_folder(argc, argv);
  if (!given) return 2;
  const std::filesystem::path& folder = *given;
  TraceConfig config;
  save(folder / "lightweight.jsonl", config);
  config.level = TraceLevel::Full;
  save(folder / "full.jsonl", config);
  config.layers = {0, 1};
  config.heads = {2};
  config.histogram = HistogramSpec{4, -2.0, 2.0};
  config.tracked_tokens = {1, 5};
  config.kinds = TraceKinds{.tensors = true, .activations = true, .attention = true, .logits = true};
  config.sample_every = 2;
  save(folder / "filtered.jsonl", config);
  return 0;
}
