// The lightweight level must not allocate per forward once warmed up (allocations counted by
// support/counting_allocator.cpp, linked into this binary).
#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "brick/trace/model_tracer.hpp"
#include "support/counting_allocator.hpp"

namespace brick::trace {
namespace {

void run_forward(ModelTracer& tracer, std::int64_t pos, const std::vector<float>& x, const std::vector<float>& r) {
  tracer.begin_forward(pos);
  for (std::uint32_t layer = 0; layer < 4; ++layer) {
    tracer.record_activation(layer, ActivationPoint::Input, x);
    tracer.record_activation(layer, ActivationPoint::AfterAttention, x, r);
    tracer.record_tensor("blk.attn_output.weight.long_name", x, static_cast<std::int32_t>(layer));
  }
  (void)tracer.end_forward();
}

TEST(TracerAllocation, LightweightForwardAllocatesNothing) {
  for (const bool stream : {false, true}) {
    const auto path = std::filesystem::temp_directory_path() / "brick_trace_allocation.jsonl";
    TraceConfig config;
    config.max_records = 64;
    config.histogram = HistogramSpec{16, -4.0, 4.0};
    ModelTracer tracer(config);
    if (stream) tracer.open_stream(path);
    std::vector<float> x(4096), r(4096);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7), r[i] = static_cast<float>(i % 5);
    for (int warm = 0; warm < 100; ++warm) run_forward(tracer, warm, x, r);  // the ring wraps, the buffer fills
    const std::uint64_t before = test::allocations();
    for (int pos = 100; pos < 600; ++pos) run_forward(tracer, pos, x, r);
    EXPECT_EQ(test::allocations(), before) << (stream ? "streaming" : "in memory");
    EXPECT_GT(tracer.summary().dropped_total(), 0u);
    if (stream) tracer.close_stream();
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace brick::trace
