#pragma once
// Feeds every brick a BrickLayer runs into a BrickProfiler: pass it as the LayerObserver of
// BrickLayer::run (or DecoderLayer::step). Each layer run becomes a profiler layer (begin_layer /
// end_layer on the running thread), each member one start/stop with the tokens, bytes and FLOPs of
// its RunReport, and the first budget seen for a BrickId becomes that brick's profiler budget. A
// member without an id is profiled by name. One observer serves one thread at a time.
#include <array>
#include <cstddef>
#include <string_view>

#include "brick/core/layer_observer.hpp"
#include "brick/profile/profiler.hpp"

namespace brick {

class ProfilerObserver final : public LayerObserver {
 public:
  explicit ProfilerObserver(BrickProfiler& profiler) noexcept : profiler_(profiler) {}

  // StateError when the thread already has a profiler layer open (the observer owns layer calls).
  void on_layer_begin(std::size_t layer_index) override;
  void on_layer_end() override;
  void on_brick_begin(BrickId id, std::string_view name) override;
  void on_brick_end(BrickId id, std::string_view name, const RunReport* report) override;

 private:
  BrickProfiler& profiler_;
  ProfileTimer timer_;
  std::array<bool, kBrickIdCount> budget_set_{};
};

}  // namespace brick
