#pragma once
// Profiles every brick a BrickLayer runs: the layer becomes a profiler layer (so Deferred mode
// buffers inside it) and each member one timed brick execution with its tokens, bytes and FLOPs; a
// member without a BrickId is profiled by name. on_layer_begin throws StateError when the thread
// already has a profiler layer open. With graph capture on (BrickProfiler::enable_graph), every
// hook also goes to the profiler's graph recorder.
#include <cstddef>
#include <string_view>

#include "brick/core/layer_observer.hpp"
#include "brick/profile/profiler.hpp"

namespace brick {

class ProfilingObserver final : public LayerObserver {
 public:
  explicit ProfilingObserver(BrickProfiler& profiler) noexcept : profiler_(profiler) {}

  void on_layer_begin(std::size_t layer_index) override;
  void on_layer_end() override;
  void on_tokens(std::size_t first_position, std::size_t count) override;
  void on_brick_begin(BrickId id, std::string_view name) override;
  void on_brick_output(const RunReport& report, std::span<float> output) override;
  void on_brick_end(BrickId id, std::string_view name, const RunReport* report) override;

 private:
  void stop(const RunReport* report) noexcept;

  BrickProfiler& profiler_;
  ProfileTimer timer_;
};

}  // namespace brick
