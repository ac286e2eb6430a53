#include "brick/trace/model_tracer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/trace/trace_file.hpp"

namespace brick::trace {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<float> ramp(std::size_t n, float scale = 1.0f) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = scale * (static_cast<float>(i % 17) - 8.0f);
  return x;
}

template <class Edit>
TraceConfig config_with(Edit edit) {
  TraceConfig config;
  edit(config);
  return config;
}

TraceConfig full_config() {
  TraceConfig config;
  config.level = TraceLevel::Full;
  config.histogram = HistogramSpec{8, -10.0, 10.0};
  config.tracked_tokens = {3};
  return config;
}

TEST(ModelTracer, QuantErrorAndTheLensAreDueOnTheirOwnForwards) {
  TraceConfig config = full_config();
  config.quant_error_every = 3;
  config.logit_lens_every = 2;
  ModelTracer tracer(config);
  EXPECT_FALSE(tracer.quant_error_due());  // outside a forward
  std::vector<std::optional<std::uint32_t>> layers;
  std::vector<bool> lens;
  for (int f = 0; f < 10; ++f) {
    tracer.begin_forward(f);
    EXPECT_EQ(tracer.quant_error_due(), f % 3 == 0) << f;
    layers.push_back(tracer.quant_error_layer(2));
    lens.push_back(tracer.logit_lens_due());
    EXPECT_FALSE(tracer.quant_error_layer(0));
    tracer.end_forward();
  }
  using L = std::optional<std::uint32_t>;
  EXPECT_EQ(layers, (std::vector<L>{0u, {}, {}, 1u, {}, {}, 0u, {}, {}, 1u}));
  EXPECT_EQ(lens, (std::vector<bool>{true, false, true, false, true, false, true, false, true, false}));

  // The lens waits for sampled forwards too; a kind that is off is never due.
  config.sample_every = 3;
  config.logit_lens_every = 1;
  config.kinds = TraceKinds{.activations = true};
  ModelTracer sparse(config);
  for (int f = 0; f < 4; ++f) {
    sparse.begin_forward(f);
    EXPECT_FALSE(sparse.logit_lens_due());
    EXPECT_FALSE(sparse.quant_error_due());
    sparse.end_forward();
  }
  config.kinds.reset();
  ModelTracer sampled(config);
  std::vector<bool> due;
  for (int f = 0; f < 4; ++f) {
    sampled.begin_forward(f);
    due.push_back(sampled.logit_lens_due());
    sampled.end_forward();
  }
  EXPECT_EQ(due, (std::vector<bool>{true, false, false, true}));
  EXPECT_THROW(ModelTracer(config_with([](TraceConfig& c) { c.quant_error_every = 0; })), InvalidArgument);
  EXPECT_THROW(ModelTracer(config_with([](TraceConfig& c) { c.logit_lens_every = 0; })), InvalidArgument);
}

TEST(ModelTracer, FirstAnomalyIsLatchedWithItsLocation) {
  ModelTracer tracer;
  const std::vector<float> healthy = ramp(64);
  std::vector<float> bad = ramp(64);
  bad[5] = kNan;
  tracer.begin_forward(7);
  tracer.record_activation(0, ActivationPoint::Input, healthy);
  EXPECT_FALSE(tracer.end_forward());
  tracer.begin_forward(8);
  tracer.record_activation(2, ActivationPoint::AfterAttention, bad);
  tracer.record_activation(3, ActivationPoint::Output, ramp(64, 1e7f));
  const std::optional<Anomaly> first = tracer.end_forward();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->kind, AnomalyKind::NonFinite);
  EXPECT_EQ(first->layer, 2u);
  EXPECT_EQ(first->point, ActivationPoint::AfterAttention);
  EXPECT_EQ(first->token_pos, 8);
  EXPECT_EQ(first->forward, 1u);
  tracer.begin_forward(9);
  tracer.record_activation(1, ActivationPoint::Output, ramp(64, 1e7f));
  EXPECT_EQ(tracer.end_forward(), first);  // a later anomaly does not overwrite it
  const TraceSummary summary = tracer.summary();
  EXPECT_EQ(summary.anomalous_forwards, 2u);
  EXPECT_EQ(summary.recorded[static_cast<std::size_t>(TraceEventKind::Anomaly)], 2u);
  tracer.clear_anomaly();
  EXPECT_FALSE(tracer.first_anomaly());
  EXPECT_EQ(tracer.summary().first_anomaly, first);
}

TEST(ModelTracer, ResidualRatioAndDominance) {
  ModelTracer tracer;
  const std::vector<float> residual = ramp(32);
  std::vector<float> out(residual);
  for (float& v : out) v *= 1.001f;
  tracer.begin_forward(0);
  tracer.record_activation(4, ActivationPoint::AfterFfn, out, residual);
  const auto anomaly = tracer.end_forward();
  ASSERT_TRUE(anomaly);
  EXPECT_EQ(anomaly->kind, AnomalyKind::ResidualDominance);
  EXPECT_NEAR(anomaly->value, 1.0 / 1.001, 1e-6);
  tracer.begin_forward(1);
  EXPECT_THROW(tracer.record_activation(0, ActivationPoint::Input, out, std::span(residual).first(3)),
               InvalidArgument);
  EXPECT_THROW(tracer.record_activation(0, ActivationPoint::Input, {}), InvalidArgument);
  tracer.end_forward();
}

TEST(ModelTracer, LevelsFiltersAndSampling) {
  TraceConfig config = full_config();
  config.layers = {1};
  config.heads = {0};
  config.sample_every = 2;
  config.anomalies_every_forward = false;
  ModelTracer tracer(config);
  const std::vector<float> w = {0.5f, 0.5f};
  for (std::int64_t pos = 0; pos < 4; ++pos) {
    tracer.begin_forward(pos);
    tracer.record_attention(1, 0, pos, w);
    tracer.record_attention(1, 1, pos, w);  // head filtered out
    tracer.record_attention(0, 0, pos, w);  // layer filtered out
    tracer.end_forward();
  }
  EXPECT_EQ(tracer.summary().recorded[static_cast<std::size_t>(TraceEventKind::Attention)], 2u);
  EXPECT_EQ(tracer.summary().sampled_forwards, 2u);

  ModelTracer light;  // lightweight: no attention, no logits
  light.begin_forward(0);
  light.record_attention(0, 0, 0, w);
  light.record_logits(0, w, 0);
  light.end_forward();
  EXPECT_TRUE(light.events().empty());
  ModelTracer off(config_with([](TraceConfig& c) { c.level = TraceLevel::Off; }));
  off.record_activation(0, ActivationPoint::Input, w);  // excluded: returns before the forward check
  EXPECT_TRUE(off.events().empty());
}

TEST(ModelTracer, BadConfigAndMisuse) {
  EXPECT_THROW(ModelTracer(config_with([](TraceConfig& c) { c.sample_every = 0; })), InvalidArgument);
  EXPECT_THROW(ModelTracer(config_with([](TraceConfig& c) { c.max_records = 0; })), InvalidArgument);
  EXPECT_THROW(ModelTracer(config_with([](TraceConfig& c) { c.logit_top_k = 17; })), InvalidArgument);
  EXPECT_THROW(ModelTracer(config_with([](TraceConfig& c) { c.layers = {kMaxFilterId}; })), InvalidArgument);
  ModelTracer tracer;
  const std::vector<float> x = ramp(8);
  EXPECT_THROW(tracer.record_activation(0, ActivationPoint::Input, x), StateError);
  EXPECT_THROW(tracer.end_forward(), StateError);
  tracer.begin_forward(0);
  EXPECT_THROW(tracer.begin_forward(1), StateError);
  EXPECT_THROW(tracer.record_tensor("", x), InvalidArgument);
  EXPECT_THROW(tracer.record_tensor("bad\"name", x), InvalidArgument);
}

TEST(ModelTracer, RingIsBoundedAndCountsDrops) {
  ModelTracer tracer(config_with([](TraceConfig& c) { c.max_records = 3; }));
  const std::vector<float> x = ramp(16);
  tracer.begin_forward(0);
  for (std::uint32_t layer = 0; layer < 5; ++layer) tracer.record_activation(layer, ActivationPoint::Input, x);
  tracer.end_forward();
  const std::vector<TraceEvent> events = tracer.events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(std::get<ActivationRecord>(events.front()).layer, 2u);
  EXPECT_EQ(std::get<ActivationRecord>(events.back()).layer, 4u);
  EXPECT_EQ(tracer.summary().dropped_total(), 2u);
  EXPECT_EQ(tracer.summary().recorded_total(), 5u);
}

TEST(ModelTracer, LogitLensFindsTheDecisiveLayer) {
  ModelTracer tracer(full_config());
  tracer.begin_forward(0);
  std::vector<float> logits(100, 1.0f);
  const float boosts[] = {0.0f, 0.5f, 5.0f};
  for (std::uint32_t layer = 0; layer < 3; ++layer) {
    logits[3] = boosts[layer];
    tracer.record_layer_logits(0, layer, logits, 3);
  }
  tracer.record_logits(0, logits, 3);
  tracer.end_forward();
  const auto events = tracer.events();
  const auto& record = std::get<LogitRecord>(events.back());
  EXPECT_EQ(record.decisive_layer, 2u);  // ranks 100, 100, 1
  EXPECT_EQ(record.stats.chosen.rank, 1u);
}

TEST(ModelTracer, QuantSummaryAndKvCache) {
  ModelTracer tracer(full_config());
  const std::vector<float> ref = ramp(64);
  std::vector<float> noisy(ref);
  for (std::size_t i = 0; i < noisy.size(); i += 2) noisy[i] += 1.0f;
  tracer.record_quant_error("FfnDown", 3, ref, ref);
  tracer.record_quant_error("FfnGate", 5, noisy, ref);
  const QuantSummary q = tracer.summary().quant;
  EXPECT_EQ(q.ok + q.warning + q.critical, 2u);
  ASSERT_TRUE(q.worst);
  EXPECT_EQ(q.worst->brick.view(), "FfnGate");
  EXPECT_EQ(q.worst->layer, 5u);
  KvCache cache(KvCacheShape{.n_layers = 1, .n_cells = 8, .n_kv_heads = 1, .head_dim = 4});
  const Pos positions[] = {0, 1, 2};
  ASSERT_TRUE(cache.find_slot(0, positions, Placement::Contiguous));
  tracer.record_kv_cache(1, cache, 0);
  const KvCacheState kv = std::get<KvCacheState>(tracer.events().back());
  EXPECT_EQ(kv.used, 3u);
  EXPECT_EQ(kv.cells, 8u);
  EXPECT_EQ(tracer.summary().kv_high_water, 3u);
}

TEST(TraceFile, StreamRoundTripsEveryRecord) {
  const auto path = std::filesystem::temp_directory_path() / "brick_trace_round_trip.jsonl";
  std::filesystem::remove(path);
  ModelTracer tracer(full_config());
  tracer.open_stream(path);
  std::vector<float> x = ramp(100, 0.37f);
  std::vector<float> residual = ramp(100, 0.1f);
  std::vector<float> logits = ramp(50, 0.11f);
  std::vector<float> weights(20, 0.01f);
  weights[0] = 0.81f;
  for (std::int64_t pos = 0; pos < 3; ++pos) {
    tracer.begin_forward(pos);
    tracer.record_tensor("blk.0.attn_q", x, 0);
    tracer.record_activation(0, ActivationPoint::AfterAttention, x, residual);
    tracer.record_activation(1, ActivationPoint::Output, x);
    tracer.record_attention(0, 1, pos, weights);
    tracer.record_layer_logits(static_cast<std::uint64_t>(pos), 0, logits, 4);
    tracer.record_logits(static_cast<std::uint64_t>(pos), logits, 4);
    tracer.end_forward();
  }
  tracer.record_quant_error("QkvProjection", 0, x, residual);
  tracer.record_kv_cache(KvCacheState{2, 64, 3, 3, 1, 1, 61, 0.0});
  x[0] = kNan;
  tracer.begin_forward(3);
  tracer.record_activation(1, ActivationPoint::Input, x);
  tracer.end_forward();
  EXPECT_FALSE(std::filesystem::exists(path));  // appears only when closed
  tracer.close_stream();
  const TraceFile file = load_trace(path);
  EXPECT_EQ(file.config, full_config());
  EXPECT_EQ(file.events, tracer.events());
  ASSERT_TRUE(file.summary);
  EXPECT_EQ(*file.summary, tracer.summary());
  EXPECT_TRUE(file.summary->first_anomaly);
  std::filesystem::remove(path);
}

TEST(TraceFile, BadLinesNameTheLine) {
  const std::string header = header_json(TraceConfig{});
  const std::string event = to_json(TraceEvent{KvCacheState{}});
  EXPECT_EQ(parse_trace(header + "\n" + event + "\n").events.size(), 1u);
  const auto message = [](const std::string& text) {
    try {
      parse_trace(text, "t.jsonl");
    } catch (const FormatError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(header + "\n\n{not json\n").find("t.jsonl:3"), std::string::npos);
  EXPECT_NE(message(header + "\n{\"type\":\"kv_cache\",\"step\":1}\n").find("t.jsonl:2"), std::string::npos);
  EXPECT_NE(message(header + "\n{\"type\":\"mystery\"}\n").find("t.jsonl:2: type"), std::string::npos);
  EXPECT_NE(message(event + "\n").find("t.jsonl:1"), std::string::npos);
  EXPECT_NE(message("").find("no header"), std::string::npos);
  EXPECT_THROW(load_trace("/nonexistent/trace.jsonl"), IoError);
}

}  // namespace
}  // namespace brick::trace
