// The llama decoder under the execution graph: what a recording of a real run holds, that
// recording changes no output bit, and that checksum runs find a fault injected into one kernel at
// one (layer, token), exactly there, while different backends agree within the tolerance.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/graph/critical_path.hpp"
#include "brick/graph/divergence.hpp"
#include "brick/graph/graph_recorder.hpp"
#include "brick/model/checksum_run.hpp"
#include "brick/model/generation.hpp"
#include "brick/model/llama_decoder.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/profile/profiler.hpp"
#include "brick/profile/profiling_observer.hpp"

namespace brick::model {
namespace {

namespace fs = std::filesystem;
using graph::CompareMode;
using graph::ExecutionGraph;
using graph::NodeId;
using graph::NodeKind;

class DecoderGraphTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = fs::temp_directory_path() / fmt::format("brick-decoder-graph-{}.gguf", getpid());
    ThreadPool pool(2);
    write_synthetic_model(SyntheticModelSpec::preset("tiny"), path_, pool);  // 2 layers, Q4_K_M
    model_ = new LlamaModel(LlamaModel::open(path_));
  }
  static void TearDownTestSuite() {
    delete model_;
    fs::remove(path_);
  }

  LlamaDecoder decoder(Backend backend = Backend::Scalar) {
    LlamaOptions options;
    options.backend = backend;
    options.n_ctx = 64;
    return LlamaDecoder(model_->config(), model_->weights(), pool_, options);
  }

  static ChecksumRun run(Backend backend, const std::vector<TokenId>& force = {},
                         std::vector<graph::KernelFault> faults = {}) {
    ThreadPool pool(2);
    return run_with_checksums(*model_, pool,
                              {.prompt = kPrompt, .n_predict = 5, .force = force, .backend = backend, .faults = faults});
  }

  static inline const std::vector<TokenId> kPrompt = {1, 300, 301, 302};
  static fs::path path_;
  static LlamaModel* model_;
  ThreadPool pool_{2};
};

fs::path DecoderGraphTest::path_;
LlamaModel* DecoderGraphTest::model_ = nullptr;

std::vector<NodeId> labelled(const ExecutionGraph& g, NodeKind kind, std::string_view label) {
  std::vector<NodeId> ids;
  for (NodeId v = 0; v < g.size(); ++v) {
    if (g.node(v).kind == kind && g.node(v).label == label) ids.push_back(v);
  }
  return ids;
}

TEST_F(DecoderGraphTest, ARecordingHoldsTheLayersBricksAndInnerKernelsOfEveryStep) {
  LlamaDecoder d = decoder();
  graph::GraphRecorder recorder;
  ASSERT_TRUE(d.evaluate(kPrompt, &recorder).has_value());
  ASSERT_TRUE(d.step(7, &recorder).has_value());
  const ExecutionGraph& g = recorder.graph();
  std::map<NodeKind, std::size_t> kinds;
  for (NodeId v = 0; v < g.size(); ++v) ++kinds[g.node(v).kind];
  EXPECT_EQ(kinds[NodeKind::Layer], 2u * 4u);  // embedding, two blocks, head; twice
  EXPECT_EQ(kinds[NodeKind::Brick], 2u * d.brick_count());
  EXPECT_EQ(g.roots().size(), 8u);

  // The fused QKV of block 1 quantizes x once per batch: the prompt's tokens together, then the
  // step's one token.
  const std::vector<NodeId> quantizes = labelled(g, NodeKind::Kernel, "blk.1.qkv/quantize_q8k");
  ASSERT_EQ(quantizes.size(), 2u);
  for (const NodeId quantize : quantizes) {
    EXPECT_EQ(g.node(*g.parent(quantize)).label, "blk.1.qkv");
    EXPECT_GT(g.node(quantize).bytes, 0.0);
  }
  EXPECT_EQ(g.node(quantizes[0]).elements, kPrompt.size() * model_->config().n_embd);
  EXPECT_EQ(g.node(quantizes[1]).elements, model_->config().n_embd);
  // Every KV write is a host copy of one K and one V row per token.
  const std::vector<NodeId> writes = labelled(g, NodeKind::Transfer, "blk.0.kv_write/kv_cache");
  ASSERT_EQ(writes.size(), kPrompt.size() + 1);
  const double row_bytes = 2.0 * static_cast<double>(model_->config().kv_dim());  // F16 cells
  for (const NodeId write : writes) {
    EXPECT_EQ(g.node(write).direction, TransferDirection::HostCopy);
    EXPECT_DOUBLE_EQ(g.node(write).bytes, 2.0 * row_bytes);
    EXPECT_EQ(g.node(write).layer, 0);
  }
  // Parallel passes have their pieces under them.
  bool pieces = false;
  for (NodeId v = 0; v < g.size(); ++v) {
    pieces = pieces || g.node(v).label.find("/slot 0") != std::string_view::npos;
  }
  EXPECT_TRUE(pieces);

  const graph::CriticalPath path = graph::critical_path(g);
  std::uint64_t roots = 0;
  for (const NodeId root : g.roots()) roots += g.node(root).duration_ns;
  EXPECT_GE(path.length_ns, roots);  // the steps ran one after another
  EXPECT_TRUE(std::any_of(path.nodes.begin(), path.nodes.end(),
                          [&](NodeId v) { return g.node(v).kind == NodeKind::Kernel; }));
}

TEST_F(DecoderGraphTest, RecordingChangesNoBitOfTheLogits) {
  LlamaDecoder plain = decoder(), recorded = decoder();
  graph::GraphRecorder recorder({.record_checksums = true});
  const auto a = plain.evaluate(kPrompt);
  const auto b = recorded.evaluate(kPrompt, &recorder);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(std::equal(a->begin(), a->end(), b->begin(), b->end()));
  EXPECT_GT(recorder.checksums().size(), 0u);
}

TEST_F(DecoderGraphTest, AGeneratorThroughAProfilerWithGraphCaptureRecordsTheSamplerToo) {
  LlamaDecoder d = decoder();
  BrickProfiler profiler;
  ProfilingObserver observer(profiler);
  graph::GraphRecorder recorder({.record_checksums = true});
  profiler.enable_graph(recorder);
  GenerationParams params;
  params.n_predict = 3;
  Generator generator(d, params);
  ASSERT_TRUE(generator.run(kPrompt, {}, &observer).has_value());
  EXPECT_EQ(labelled(recorder.graph(), NodeKind::Brick, "sampling").size(), 3u);
  EXPECT_GT(profiler.brick_stats(BrickId::Sampling).count, 0u);
  // The sampler's checksum sits at the position of the token whose logits it read.
  std::vector<std::int64_t> positions;
  for (std::size_t i = 0; i < recorder.checksums().size(); ++i) {
    if (recorder.checksums()[i].kernel == "sampling") positions.push_back(recorder.checksums()[i].position);
  }
  EXPECT_EQ(positions, (std::vector<std::int64_t>{3, 4, 5}));
}

TEST_F(DecoderGraphTest, AChecksumRunHasAnEntryForEveryBrickAndToken) {
  const ChecksumRun reference = run(Backend::Scalar);
  ASSERT_EQ(reference.tokens.size(), 5u);
  const std::size_t per_token = 1 + 2 * 11;  // the embedding and two blocks run every token
  const std::size_t evaluated = kPrompt.size() + 4;
  EXPECT_EQ(reference.log.size(), evaluated * per_token + 5 * 2);  // plus the head once per evaluation
  EXPECT_EQ(reference.log[0].kernel, "token_embd");
  // Teacher forcing feeds the forced ids: a run forced on the reference's tokens is the reference.
  const ChecksumRun again = run(Backend::Scalar, reference.tokens);
  EXPECT_EQ(again.tokens, reference.tokens);
  EXPECT_FALSE(find_divergence(reference.log, again.log, CompareMode::Exact).diverged());
}

TEST_F(DecoderGraphTest, AFaultInOneKernelIsFoundExactlyThereInBothModes) {
  const ChecksumRun reference = run(Backend::Scalar);
  const graph::KernelFault fault{"blk.1.ffn_down", 1, 5, Backend::Scalar, 1.0f};
  const ChecksumRun candidate = run(Backend::Scalar, reference.tokens, {fault});
  for (const CompareMode mode : {CompareMode::Exact, CompareMode::Tolerance}) {
    const graph::DivergenceReport report = find_divergence(reference.log, candidate.log, mode);
    ASSERT_TRUE(report.first) << name(mode);
    EXPECT_EQ(report.first->key, (graph::ChecksumKey{"blk.1.ffn_down", 1, 5, 0})) << report.to_text();
    EXPECT_GT(report.divergent, 1u);  // what came after it read the fault
    EXPECT_TRUE(report.only_in_candidate.empty());
  }
  // The same fault for another backend changes nothing in a Scalar run.
  const ChecksumRun untouched = run(Backend::Scalar, reference.tokens, {{"blk.1.ffn_down", 1, 5, Backend::Avx2, 1.0f}});
  EXPECT_FALSE(find_divergence(reference.log, untouched.log, CompareMode::Exact).diverged());
}

TEST_F(DecoderGraphTest, EveryBackendAgreesWithScalarWithinTheTolerance) {
  const ChecksumRun reference = run(Backend::Scalar);
  std::size_t compared = 0;
  for (const Backend backend : {Backend::Avx2, Backend::Avx512}) {
    if (!is_supported(backend)) continue;
    const ChecksumRun candidate = run(backend, reference.tokens);
    const graph::DivergenceReport report = find_divergence(reference.log, candidate.log, CompareMode::Tolerance);
    EXPECT_FALSE(report.diverged()) << name(backend) << "\n" << report.to_text();
    EXPECT_EQ(report.compared, reference.log.size());
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "this CPU runs no backend besides Scalar";
}

TEST_F(DecoderGraphTest, BadRequestsFailBeforeAnythingRuns) {
  ThreadPool pool(1);
  EXPECT_THROW(run_with_checksums(*model_, pool, {.prompt = {}}), InvalidArgument);
  EXPECT_THROW(run_with_checksums(*model_, pool, {.prompt = {1, 99999}}), InvalidArgument);
  EXPECT_THROW(run_with_checksums(*model_, pool, {.prompt = {1}, .n_predict = 100000}), CapacityError);
}

}  // namespace
}  // namespace brick::model
