#pragma once
// A fault to inject on purpose, so that a test can check that divergence finding names the right
// kernel: a GraphRecorder given one (GraphRecorderOptions::faults) adds `offset` to every value of
// one token's row of one brick's output, in one layer, for one backend's runs, before it records
// the checksum. The bricks after it read the changed values, as they would a wrong kernel's.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "brick/core/backend.hpp"

namespace brick::graph {

struct KernelFault {
  std::string kernel;               // the brick's name: "blk.1.ffn_down"
  std::int32_t layer = 0;           // the observer's layer index
  std::int64_t position = 0;        // the token's position in the sequence
  std::optional<Backend> backend;   // only runs on this backend; nullopt: every backend
  float offset = 1.0f;

  bool matches(std::string_view brick, std::int32_t in_layer, Backend on) const noexcept {
    return brick == kernel && in_layer == layer && (!backend || *backend == on);
  }
};

// "KERNEL,LAYER,TOKEN" or "KERNEL,LAYER,TOKEN,BACKEND" (scalar, avx2, avx512), as `brick verify
// --inject-fault` takes it. InvalidArgument saying what is wrong otherwise.
KernelFault parse_kernel_fault(std::string_view text);

}  // namespace brick::graph
