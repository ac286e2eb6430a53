#pragma once
// Hooks a BrickLayer calls around each member, so that layers above core (the profiler, the
// execution graph, tracers) can see every brick execution without core depending on them.
#include <cstddef>
#include <span>
#include <string_view>

#include "brick/core/brick_id.hpp"
#include "brick/core/run_result.hpp"

namespace brick {

class LayerObserver {
 public:
  virtual ~LayerObserver() = default;
  virtual void on_layer_begin(std::size_t /*layer_index*/) {}
  virtual void on_layer_end() {}
  // The tokens the layers that follow run, until the next call: `count` tokens at positions
  // first_position, first_position + 1, ... (a decoder announces every batch and every step). A
  // brick that takes k of them (the head takes the last token only) takes the last k.
  virtual void on_tokens(std::size_t /*first_position*/, std::size_t /*count*/) {}
  virtual void on_brick_begin(BrickId /*id*/, std::string_view /*name*/) {}
  // After a brick ran without an error, before on_brick_end: the values it wrote, rows of
  // report.metrics.tokens tokens. An observer reads them (checksums); a test that injects a fault
  // changes them, as a wrong kernel would, and the bricks after it read what it wrote.
  virtual void on_brick_output(const RunReport& /*report*/, std::span<float> /*output*/) {}
  // Called after the brick ran, with its report (also when the brick returned an error, where
  // `report` is null).
  virtual void on_brick_end(BrickId /*id*/, std::string_view /*name*/,
                            const RunReport* /*report*/) {}
};

}  // namespace brick
