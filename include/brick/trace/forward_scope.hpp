#pragma once
// ForwardScope: one forward pass of a ModelTracer as a scope. It calls begin_forward() when made and
// end_forward() when it ends, so that a forward an exception leaves does not stay open (the
// anomaly it latched is the tracer's first_anomaly()). With no tracer, or one already in a forward (a caller above opened it: the
// generation loop brackets a decoder step and the sampling after it), it joins that forward and
// neither begins nor ends one.
#include <cstdint>

#include "brick/trace/model_tracer.hpp"

namespace brick::trace {

class ForwardScope {
 public:
  ForwardScope(ModelTracer* tracer, std::int64_t token_pos)
      : tracer_(tracer != nullptr && !tracer->in_forward() ? tracer : nullptr) {
    if (tracer_) tracer_->begin_forward(token_pos);
  }
  ~ForwardScope() {
    if (tracer_) tracer_->end_forward();
  }
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;

  // Whether this scope began the forward (and ends it).
  bool owns() const noexcept { return tracer_ != nullptr; }

 private:
  ModelTracer* const tracer_;
};

}  // namespace brick::trace
