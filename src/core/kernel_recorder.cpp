#include "brick/core/kernel_recorder.hpp"

#include <utility>

namespace brick {
namespace detail {

constinit thread_local KernelRecorder* tls_kernel_recorder = nullptr;

}  // namespace detail

std::string_view name(TransferDirection direction) noexcept {
  switch (direction) {
    case TransferDirection::HostToDevice:
      return "host_to_device";
    case TransferDirection::DeviceToHost:
      return "device_to_host";
    case TransferDirection::DeviceToDevice:
      return "device_to_device";
    case TransferDirection::HostCopy:
      break;
  }
  return "host_copy";
}

KernelRecorder* set_kernel_recorder(KernelRecorder* recorder) noexcept {
  return std::exchange(detail::tls_kernel_recorder, recorder);
}

}  // namespace brick
