// The llama decoder traced by a ModelTracer: tracing changes no number (the same logits, bit for
// bit, at every level), every layer and head is recorded where the decoder header says, the
// attention weights are the ones the brick weighted V with, the logit lens ends at the logits, the
// quantization error is measured on due forwards only, and an anomaly is latched where it happened.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "brick/model/attention.hpp"
#include "brick/model/generation.hpp"
#include "brick/model/llama_decoder.hpp"
#include "brick/model/llama_model.hpp"
#include "brick/model/synthetic_model.hpp"
#include "brick/ops/matvec.hpp"
#include "brick/trace/model_tracer.hpp"

namespace brick::model {
namespace {

namespace fs = std::filesystem;
using trace::ActivationPoint;
using trace::ModelTracer;
using trace::TraceConfig;
using trace::TraceLevel;

class DecoderTraceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = fs::temp_directory_path() / fmt::format("brick-decoder-trace-{}.gguf", getpid());
    SyntheticModelSpec spec = SyntheticModelSpec::preset("tiny");  // 2 layers, 4 heads / 2 kv, Q4_K_M
    spec.n_ctx = 64;
    ThreadPool pool(2);
    write_synthetic_model(spec, path_, pool);
    model_ = new LlamaModel(LlamaModel::open(path_));
  }
  static void TearDownTestSuite() {
    delete model_;
    fs::remove(path_);
  }

  // Batches of 3, so that a prompt of 7 runs in three batches of shared buffers.
  LlamaDecoder decoder() {
    LlamaOptions options;
    options.n_ctx = 64;
    options.n_batch = 3;
    return LlamaDecoder(model_->config(), model_->weights(), pool_, options);
  }

  static TraceConfig config(TraceLevel level, std::uint64_t quant_every = 1) {
    TraceConfig c;
    c.level = level;
    c.quant_error_every = quant_every;
    c.logit_lens_every = 1;
    return c;
  }

  static Generation generate_with(LlamaDecoder& d, ModelTracer* tracer, std::size_t n = 5) {
    d.set_tracer(tracer);
    GenerationParams params;
    params.n_predict = n;
    params.top_logits = 8;
    const std::vector<TokenId> prompt = {1, 17, 33, 300, 42, 7, 99};
    auto generation = model::generate(d, prompt, params);
    EXPECT_TRUE(generation.has_value());
    return *generation;
  }

  static const LlamaConfig& cfg() { return model_->config(); }

  static fs::path path_;
  static LlamaModel* model_;
  ThreadPool pool_{2};
};

fs::path DecoderTraceTest::path_;
LlamaModel* DecoderTraceTest::model_ = nullptr;

template <class Record>
std::vector<Record> records_of(const ModelTracer& tracer) {
  std::vector<Record> out;
  for (const trace::TraceEvent& event : tracer.events()) {
    if (const auto* r = std::get_if<Record>(&event)) out.push_back(*r);
  }
  return out;
}

TEST_F(DecoderTraceTest, TracingChangesNoNumberAtAnyLevel) {
  for (const TraceLevel level : {TraceLevel::Lightweight, TraceLevel::Full}) {
    SCOPED_TRACE(std::string(trace::name(level)));
    LlamaDecoder plain = decoder();
    const Generation reference = generate_with(plain, nullptr);
    LlamaDecoder traced = decoder();
    ModelTracer tracer(config(level));
    const Generation got = generate_with(traced, &tracer);
    EXPECT_EQ(got.generated, reference.generated);
    ASSERT_EQ(got.steps.size(), reference.steps.size());
    for (std::size_t i = 0; i < got.steps.size(); ++i) {
      ASSERT_EQ(got.steps[i].top.size(), reference.steps[i].top.size());
      for (std::size_t k = 0; k < got.steps[i].top.size(); ++k) {
        EXPECT_EQ(got.steps[i].top[k].id, reference.steps[i].top[k].id);
        EXPECT_EQ(std::memcmp(&got.steps[i].top[k].logit, &reference.steps[i].top[k].logit, sizeof(float)), 0)
            << "step " << i << " rank " << k;
      }
    }
    // The whole logits of one more step, bit for bit.
    const auto a = plain.step(5);
    const auto b = traced.step(5);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(std::memcmp(a->data(), b->data(), a->size_bytes()), 0);
    EXPECT_FALSE(tracer.in_forward());
    EXPECT_FALSE(tracer.first_anomaly()) << trace::name(tracer.first_anomaly()->kind);
  }
}


TEST_F(DecoderTraceTest, EveryLayerPointAndHeadIsRecordedWhereTheHeaderSays) {
  LlamaDecoder d = decoder();
  ModelTracer tracer(config(TraceLevel::Full, 1));
  const Generation g = generate_with(d, &tracer);
  const std::size_t forwards = g.steps.size();  // the prompt, then one per fed token
  ASSERT_EQ(tracer.summary().forwards, forwards);

  // Activations: every block and point, per forward (the prompt's three batches each add one set).
  std::map<std::pair<std::uint32_t, ActivationPoint>, std::size_t> points;
  for (const auto& r : records_of<trace::ActivationRecord>(tracer)) {
    ++points[{r.layer, r.point}];
    if (r.point == ActivationPoint::AfterAttention || r.point == ActivationPoint::Output) {
      ASSERT_TRUE(r.residual_ratio.has_value());
      EXPECT_GT(*r.residual_ratio, 0.0);
      EXPECT_LT(*r.residual_ratio, 1.0);
    } else {
      EXPECT_FALSE(r.residual_ratio.has_value());
    }
    EXPECT_EQ(r.stats.nan_count + r.stats.inf_count, 0u);
  }
  EXPECT_EQ(points.size(), cfg().n_layer * 5);
  for (const auto& [key, count] : points) EXPECT_EQ(count, forwards - 1 + 3) << key.first;

  // Attention: every block and head of every forward, over the last token's window, summing to 1.
  const auto attention = records_of<trace::AttentionRecord>(tracer);
  EXPECT_EQ(attention.size(), forwards * cfg().n_layer * cfg().n_head);
  for (const auto& r : attention) {
    EXPECT_EQ(r.stats.positions, static_cast<std::uint32_t>(r.query_pos + 1));
    EXPECT_NEAR(r.stats.total_mass, 1.0, 1e-3);
  }
  EXPECT_EQ(attention.front().query_pos, 6);  // the prompt's last token

  // Logits with the sampled token, and the lens for every layer of every step; the last layer's lens
  // is the head itself.
  const auto logits = records_of<trace::LogitRecord>(tracer);
  const auto lens = records_of<trace::LayerLogitRecord>(tracer);
  ASSERT_EQ(logits.size(), forwards);
  ASSERT_EQ(lens.size(), forwards * cfg().n_layer);
  for (std::size_t i = 0; i < forwards; ++i) {
    EXPECT_EQ(logits[i].step, i);
    EXPECT_EQ(logits[i].stats.chosen.token, g.steps[i].predicted);
    EXPECT_EQ(logits[i].stats.chosen.rank, 1u);  // greedy
    const trace::LayerLogitRecord& last = lens[i * cfg().n_layer + cfg().n_layer - 1];
    EXPECT_EQ(last.layer, cfg().n_layer - 1);
    EXPECT_EQ(last.top.token, logits[i].stats.top[0].token);
    EXPECT_EQ(last.top.logit, logits[i].stats.top[0].logit);
    EXPECT_EQ(last.chosen.rank, 1u);
  }

  // Quantization error on every forward, one layer each in turn: block 0, block 1, the head, block
  // 0, block 1.
  const auto quant = records_of<trace::QuantErrorRecord>(tracer);
  ASSERT_EQ(quant.size(), 4u + 4u + 1u + 4u + 4u);
  std::map<std::string, std::size_t> bricks;
  for (const auto& r : quant) {
    ++bricks[std::string(r.brick.view())];
    EXPECT_GT(r.error.cosine, 0.95) << r.brick.view();
    EXPECT_LE(r.error.cosine, 1.0 + 1e-12);
    EXPECT_EQ(r.error.non_finite, 0u);
  }
  for (const char* brick : {"blk.0.qkv", "blk.0.attn_output", "blk.0.gate_up", "blk.0.ffn_down", "blk.1.qkv",
                            "blk.1.attn_output", "blk.1.gate_up", "blk.1.ffn_down"}) {
    EXPECT_EQ(bricks[brick], 2u) << brick;
  }
  EXPECT_EQ(bricks["output"], 1u);
  EXPECT_EQ(quant[8].brick.view(), "output");
  EXPECT_EQ(quant[8].layer, cfg().n_layer);

  // The KV cache after every evaluate(), and the three named tensors of every forward (the
  // embedding once per batch).
  const auto kv = records_of<trace::KvCacheState>(tracer);
  ASSERT_EQ(kv.size(), forwards);
  EXPECT_EQ(kv.front().used, 7u);
  EXPECT_EQ(kv.back().used, 7u + forwards - 1);
  std::map<std::string, std::size_t> tensors;
  for (const auto& r : records_of<trace::TensorRecord>(tracer)) ++tensors[std::string(r.name.view())];
  EXPECT_EQ(tensors["token_embd"], forwards - 1 + 3);
  EXPECT_EQ(tensors["output_norm"], forwards - 1 + 3);
  EXPECT_EQ(tensors["logits"], forwards - 1 + 3);
}

TEST_F(DecoderTraceTest, LightweightRecordsStatsAndActivationsOnly) {
  LlamaDecoder d = decoder();
  ModelTracer tracer(config(TraceLevel::Lightweight));
  generate_with(d, &tracer, 3);
  const trace::TraceSummary s = tracer.summary();
  using K = trace::TraceEventKind;
  EXPECT_GT(s.recorded[static_cast<std::size_t>(K::Activation)], 0u);
  EXPECT_GT(s.recorded[static_cast<std::size_t>(K::Tensor)], 0u);
  for (const K k : {K::Attention, K::Logits, K::LayerLogits, K::QuantError, K::KvCache}) {
    EXPECT_EQ(s.recorded[static_cast<std::size_t>(k)], 0u) << trace::name(k);
  }
  EXPECT_TRUE(d.layer_logits().empty());
}

TEST_F(DecoderTraceTest, ADecoderAloneOpensAForwardPerEvaluateAndComputesNoLens) {
  LlamaDecoder d = decoder();
  ModelTracer tracer(config(TraceLevel::Full));
  d.set_tracer(&tracer);
  const std::vector<TokenId> prompt = {1, 2, 3, 4};
  ASSERT_TRUE(d.evaluate(prompt));
  ASSERT_TRUE(d.step(5));
  EXPECT_EQ(tracer.summary().forwards, 2u);
  EXPECT_FALSE(tracer.in_forward());
  EXPECT_TRUE(d.layer_logits().empty());
  EXPECT_TRUE(records_of<trace::LogitRecord>(tracer).empty());
  EXPECT_EQ(records_of<trace::AttentionRecord>(tracer).size(), 2 * cfg().n_layer * cfg().n_head);
  // verify() replays the last token without tracing it.
  const std::size_t before = tracer.summary().recorded_total();
  for (const VerifyReport& report : d.verify()) EXPECT_TRUE(report.passed()) << report.brick;
  EXPECT_EQ(tracer.summary().recorded_total(), before);
}

// Writes a value far out of range into one brick's output, as a broken kernel would.
class PoisonBrick final : public LayerObserver {
 public:
  explicit PoisonBrick(std::string brick, std::size_t at_call) : brick_(std::move(brick)), at_call_(at_call) {}
  void on_brick_output(const RunReport& report, std::span<float> output) override {
    if (report.brick == brick_ && calls_++ == at_call_) output[3] = 1e7f;
  }

 private:
  std::string brick_;
  std::size_t at_call_;
  std::size_t calls_ = 0;
};

TEST_F(DecoderTraceTest, TheFirstAnomalyIsLatchedWhereItHappened) {
  LlamaDecoder d = decoder();
  ModelTracer tracer(config(TraceLevel::Lightweight));
  d.set_tracer(&tracer);
  PoisonBrick poison("blk.1.ffn_down", 3);  // the prompt's three batches, then the first step
  GenerationParams params;
  params.n_predict = 4;
  const std::vector<TokenId> prompt = {1, 17, 33, 300, 42, 7, 99};
  const auto generation = model::generate(d, prompt, params, {}, &poison);
  ASSERT_TRUE(generation.has_value());
  const auto anomaly = tracer.first_anomaly();
  ASSERT_TRUE(anomaly.has_value());
  EXPECT_EQ(anomaly->kind, trace::AnomalyKind::Explosion);
  EXPECT_EQ(anomaly->value, 1e7);
  EXPECT_EQ(anomaly->layer, 1u);
  EXPECT_EQ(anomaly->point, ActivationPoint::AfterFfn);
  EXPECT_EQ(anomaly->token_pos, 7);
  EXPECT_EQ(anomaly->forward, 1u);
  EXPECT_EQ(tracer.summary().first_anomaly, anomaly);
}

TEST_F(DecoderTraceTest, SoftmaxWeightsAreTheOnesTheBrickWeightedValuesWith) {
  for (const KvType type : {KvType::F32, KvType::F16}) {
    SCOPED_TRACE(type == KvType::F16 ? "f16" : "f32");
    const std::size_t heads = 4, kv_heads = 2, d = 8, cells = 5;
    KvCache cache({1, 16, kv_heads, d, type});
    std::vector<Pos> positions(cells);
    for (std::size_t i = 0; i < cells; ++i) positions[i] = static_cast<Pos>(i);
    const auto slot = cache.find_slot(0, positions, Placement::Contiguous);
    ASSERT_TRUE(slot.has_value());
    std::vector<float> k(cells * kv_heads * d), v(k.size()), q(2 * heads * d);
    for (std::size_t i = 0; i < k.size(); ++i) {
      k[i] = std::sin(0.37f * static_cast<float>(i));
      v[i] = std::cos(0.21f * static_cast<float>(i));
    }
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = 2.0f * std::cos(0.13f * static_cast<float>(i));
    std::vector<float> stored(2 * cells * kv_heads * d);
    KvWriteOp write(cache);
    write.run({k, v, 0, 0, cells}, stored, Backend::Scalar);
    AttentionOp attention(cache, {heads, kv_heads, d}, pool_);
    const AttentionOp::Input input{q, 0, cells, 2};  // two tokens: the last attends to all five cells
    for (const Backend backend : {Backend::Scalar, Backend::Auto}) {
      std::vector<float> out(2 * heads * d);
      attention.run(input, out, resolve(backend));
      for (std::size_t h = 0; h < heads; ++h) {
        std::vector<float> p(cells);
        attention.softmax_weights(input, h, p, resolve(backend));
        double sum = 0.0;
        for (const float w : p) sum += w;
        EXPECT_NEAR(sum, 1.0, 1e-3);
        // out_h = V^T p over the kv head's values, as the brick computes it.
        std::vector<float> values(cells * d), expected(d);
        const std::size_t kv_head = h / (heads / kv_heads);
        for (std::size_t c = 0; c < cells; ++c) {
          for (std::size_t j = 0; j < d; ++j) values[c * d + j] = stored[2 * c * kv_heads * d + kv_heads * d + kv_head * d + j];
        }
        ops::matvec_transposed(values, cells, d, p, expected, resolve(backend));
        const auto got = std::span(out).subspan(heads * d + h * d, d);
        EXPECT_EQ(std::memcmp(got.data(), expected.data(), d * sizeof(float)), 0) << "head " << h;
      }
    }
    std::vector<float> wrong(cells + 1);
    EXPECT_THROW(attention.softmax_weights(input, 0, wrong, Backend::Scalar), InvalidArgument);
    std::vector<float> p(cells);
    EXPECT_THROW(attention.softmax_weights(input, heads, p, Backend::Scalar), InvalidArgument);
  }
}

}  // namespace
}  // namespace brick::model
