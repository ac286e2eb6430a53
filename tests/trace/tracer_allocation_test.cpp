// The lightweight level must not allocate per forward once warmed up: this file replaces the global
// allocation functions of the test binary with counting ones, as profiler_allocation_test.cpp does.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <vector>

#include "brick/trace/model_tracer.hpp"

namespace {

std::atomic<std::uint64_t> allocations{0};

void* counted_allocate(std::size_t size, std::size_t alignment) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size == 0 ? 1 : size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocate(size, 0); }
void* operator new[](std::size_t size) { return counted_allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t al) { return counted_allocate(size, static_cast<std::size_t>(al)); }
void* operator new[](std::size_t size, std::align_val_t al) { return counted_allocate(size, static_cast<std::size_t>(al)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocate(size, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

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
    const std::uint64_t before = allocations.load();
    for (int pos = 100; pos < 600; ++pos) run_forward(tracer, pos, x, r);
    EXPECT_EQ(allocations.load(), before) << (stream ? "streaming" : "in memory");
    EXPECT_GT(tracer.summary().dropped_total(), 0u);
    if (stream) tracer.close_stream();
    std::filesystem::remove(path);
  }
}

}  // namespace
}  // namespace brick::trace
