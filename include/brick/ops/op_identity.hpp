#pragma once
// What every op brick carries besides its math: the BrickId the profiler indexes by and a label for
// reports. One layer holds several bricks of a kind (two norms, seven projections), so the caller
// may name each one; the default label is the op's kind ("rms_norm", "matvec.DownProjection").
#include <string>
#include <utility>

#include "brick/core/brick_id.hpp"

namespace brick::ops {

class OpIdentity {
 public:
  OpIdentity(BrickId id, std::string label) : id_(id), label_(std::move(label)) {}

  BrickId id() const noexcept { return id_; }
  const std::string& name() const noexcept { return label_; }

 private:
  BrickId id_;
  std::string label_;
};

}  // namespace brick::ops
