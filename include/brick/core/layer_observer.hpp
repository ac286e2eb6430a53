#pragma once
// Hooks a BrickLayer calls around each member, so that layers above core (the profiler, the
// execution graph, tracers) can see every brick execution without core depending on them.
#include <cstddef>
#include <string_view>

#include "brick/core/brick_id.hpp"
#include "brick/core/run_result.hpp"

namespace brick {

class LayerObserver {
 public:
  virtual ~LayerObserver() = default;
  virtual void on_layer_begin(std::size_t /*layer_index*/) {}
  virtual void on_layer_end() {}
  virtual void on_brick_begin(BrickId /*id*/, std::string_view /*name*/) {}
  // Called after the brick ran, with its report (also when the brick returned an error, where
  // `report` is null).
  virtual void on_brick_end(BrickId /*id*/, std::string_view /*name*/,
                            const RunReport* /*report*/) {}
};

}  // namespace brick
