// digest_trace and format_trace_digest on a trace whose answers are known: anomalies in order, the
// worst quantized brick first, sinks counted per layer and head, steps by step and spread evenly in
// print; and what a trace without a summary record, or with nothing of a kind, says.
#include "brick/trace/trace_digest.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "brick/trace/forward_scope.hpp"
#include "brick/trace/model_tracer.hpp"

namespace brick::trace {
namespace {

// Attention weights with the top weight at position 0 (a sink) or spread evenly.
std::vector<float> weights(bool sink, std::size_t n = 8) {
  std::vector<float> w(n, sink ? 0.3f / static_cast<float>(n - 1) : 1.0f / static_cast<float>(n));
  if (sink) w[0] = 0.7f;
  return w;
}

std::vector<float> logits(std::size_t hot, std::size_t n = 32) {
  std::vector<float> l(n, 0.0f);
  l[hot] = 6.0f;
  return l;
}

// Six forwards of a full tracer: sinks in layer 1 head 2 only, an explosion in forward 2 and a NaN
// in forward 4, quantization error good for one brick and poor for another.
TraceFile sample_trace() {
  TraceConfig config;
  config.level = TraceLevel::Full;
  ModelTracer tracer(config);
  std::vector<float> healthy(16);
  for (std::size_t i = 0; i < healthy.size(); ++i) healthy[i] = 0.1f * static_cast<float>(i) - 0.8f;
  std::vector<float> exploded = healthy, nan = healthy;
  exploded[3] = 1e8f;
  nan[1] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> reference = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> close = {1, 2, 3, 4, 5, 6, 7, 8.01f};
  const std::vector<float> poor = {8, 7, 6, 5, 4, 3, 2, 1};
  for (std::uint64_t f = 0; f < 6; ++f) {
    ForwardScope forward(&tracer, static_cast<std::int64_t>(10 + f));
    tracer.record_activation(0, ActivationPoint::Input, f == 2 ? exploded : healthy);
    tracer.record_activation(1, ActivationPoint::Output, f == 4 ? nan : healthy);
    for (std::uint32_t head = 0; head < 3; ++head) {
      tracer.record_attention(1, head, static_cast<std::int64_t>(10 + f), weights(head == 2));
    }
    tracer.record_quant_error("blk.0.qkv", 0, close, reference);
    tracer.record_quant_error("blk.1.ffn_down", 1, poor, reference);
    tracer.record_logits(f, logits(f), static_cast<std::int32_t>(f));
  }
  return parse_trace(header_json(config) + "\n" + [&] {
    std::string lines;
    for (const TraceEvent& event : tracer.events()) lines += to_json(event) + "\n";
    return lines + to_json(tracer.summary()) + "\n";
  }());
}

TEST(TraceDigest, FindsWhatTheTraceHolds) {
  const TraceDigest d = digest_trace(sample_trace());
  ASSERT_TRUE(d.summary.has_value());
  EXPECT_EQ(d.summary->forwards, 6u);
  EXPECT_EQ(d.events[static_cast<std::size_t>(TraceEventKind::Attention)], 18u);

  ASSERT_EQ(d.anomalies.size(), 2u);
  EXPECT_EQ(d.anomalies[0].kind, AnomalyKind::Explosion);
  EXPECT_EQ(d.anomalies[0].token_pos, 12);
  EXPECT_EQ(d.anomalies[1].kind, AnomalyKind::NonFinite);
  EXPECT_EQ(d.anomalies[1].layer, 1u);

  ASSERT_EQ(d.quant.size(), 2u);
  EXPECT_EQ(d.quant[0].brick.view(), "blk.1.ffn_down");
  EXPECT_EQ(d.quant[0].samples, 6u);
  EXPECT_EQ(d.quant[0].worst_class, QuantClass::Critical);
  EXPECT_EQ(d.quant[1].brick.view(), "blk.0.qkv");
  EXPECT_EQ(d.quant[1].worst_class, QuantClass::Ok);

  ASSERT_EQ(d.heads.size(), 3u);
  EXPECT_EQ(d.heads[0].head, 2u);
  EXPECT_EQ(d.heads[0].sinks, 6u);
  EXPECT_EQ(d.heads[0].queries, 6u);
  EXPECT_EQ(d.heads[1].sinks, 0u);
  EXPECT_EQ(d.heads[1].uniform, 6u);
  EXPECT_NEAR(d.heads[1].mean_entropy, std::log(8.0), 1e-6);

  ASSERT_EQ(d.steps.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(d.steps[i].step, i);
    EXPECT_EQ(d.steps[i].chosen.token, static_cast<std::int32_t>(i));
    EXPECT_EQ(d.steps[i].chosen.rank, 1u);
  }
}

TEST(TraceDigest, PrintsEveryPartAndKeepsTablesToTheRowsAsked) {
  const std::string text = format_trace_digest(digest_trace(sample_trace()), 3);
  for (const char* part : {"trace: level full", "6 forwards (6 sampled)",
                           "anomalies: 2 forwards had one; the first: explosion at layer 0, input, token 12",
                           "then non_finite at layer 1, output, token 14", "quantization error: 2 bricks measured",
                           "blk.1.ffn_down", "critical", "attention: 18 queries over 3 heads; sinks 6",
                           "logits: 6 steps"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
  // Three of six steps: the first, one between and the last.
  const auto step_rows = [&] {
    std::vector<std::string> rows;
    const std::size_t table = text.find("decisive");
    std::size_t at = text.find('\n', table) + 1;
    while (at < text.size()) {
      const std::size_t end = text.find('\n', at);
      rows.push_back(text.substr(at, end - at));
      at = end + 1;
    }
    return rows;
  }();
  ASSERT_EQ(step_rows.size(), 3u) << text;
  EXPECT_EQ(step_rows[0].substr(0, 8), "       0");
  EXPECT_EQ(step_rows[2].substr(0, 8), "       5");
}

TEST(TraceDigest, SaysWhatATraceDoesNotHold) {
  TraceConfig config;
  config.level = TraceLevel::Lightweight;
  const TraceDigest d = digest_trace(parse_trace(header_json(config) + "\n"));
  EXPECT_FALSE(d.summary.has_value());
  const std::string text = format_trace_digest(d);
  for (const char* part : {"no summary record", "anomalies: none", "quantization error: not measured",
                           "attention: not traced", "logits: not traced"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

}  // namespace
}  // namespace brick::trace
