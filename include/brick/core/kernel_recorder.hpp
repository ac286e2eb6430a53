#pragma once
// Hooks for the work inside a brick (activation quantization, a mat-vec's parallel pass, a
// ThreadPool's fork and join, a KV-cache write), so that a recorder above core (the execution
// graph, graph/) sees the inner kernels of every brick without the rooms below depending on it.
//
// A recorder is installed per thread (set_kernel_recorder) and sees only what runs on the thread
// that installed it; work that the pool's workers do comes back to it through parallel_call(),
// made by the calling thread after the join. With no recorder installed every hook is one
// thread-local load and a branch: no clock read, no call.
//
// Every time stamp is kernel_clock_ns() (steady clock, ns), the clock the recorder must use too.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "brick/core/backend.hpp"

namespace brick {

enum class TransferDirection : std::uint8_t { HostToDevice, DeviceToHost, DeviceToDevice, HostCopy };

// "host_to_device", "device_to_host", "device_to_device", "host_copy".
std::string_view name(TransferDirection direction) noexcept;

// What a kernel did, for GB/s, GFLOP/s and its arithmetic intensity.
struct KernelWork {
  std::uint64_t elements = 0;
  double flops = 0.0;
  double bytes = 0.0;  // read plus written
};

// Bytes moved without computing on them. The names are what was copied from and to, with static
// storage (string literals), as kernel names.
struct TransferRecord {
  std::string_view source;
  std::string_view destination;
  TransferDirection direction = TransferDirection::HostCopy;
  std::uint64_t bytes = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

// One slot's piece of a ThreadPool call: rows [begin, end) of the call, on the calling thread
// (slot 0, and the pieces it ran because no worker had picked them up) or on slot's worker.
struct ParallelPiece {
  std::size_t slot = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  bool on_caller = false;
};

// A ThreadPool call seen from the thread that made it: its pieces (those with work, in slot order)
// and the join, [join_start_ns, end_ns), the time the caller waited for the workers.
struct ParallelCall {
  std::uint64_t start_ns = 0;
  std::uint64_t join_start_ns = 0;
  std::uint64_t end_ns = 0;
  std::span<const ParallelPiece> pieces;
};

class KernelRecorder {
 public:
  virtual ~KernelRecorder() = default;
  // A kernel begins. `name` has static storage (a string literal or a kernel table's name), so a
  // recorder may keep it and tell names apart by address. Kernels nest: KernelScope balances the
  // begin/end pairs.
  virtual void kernel_begin(std::string_view name, Backend backend, std::uint64_t start_ns) noexcept = 0;
  virtual void kernel_end(const KernelWork& work, std::uint64_t end_ns) noexcept = 0;
  virtual void transfer(const TransferRecord& transfer) noexcept = 0;
  virtual void parallel_call(const ParallelCall& call) noexcept = 0;
};

namespace detail {
extern constinit thread_local KernelRecorder* tls_kernel_recorder;
}  // namespace detail

// The calling thread's recorder, or null.
inline KernelRecorder* active_kernel_recorder() noexcept { return detail::tls_kernel_recorder; }

// Installs `recorder` (null: none) for the calling thread and returns the one it replaces.
KernelRecorder* set_kernel_recorder(KernelRecorder* recorder) noexcept;

inline std::uint64_t kernel_clock_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// One inner kernel, from construction to destruction (an exception included), reported to the
// calling thread's recorder, if any, with the work given to set_work().
class KernelScope {
 public:
  KernelScope(std::string_view name, Backend backend) noexcept : recorder_(active_kernel_recorder()) {
    if (recorder_ != nullptr) [[unlikely]]
      recorder_->kernel_begin(name, backend, kernel_clock_ns());
  }
  ~KernelScope() {
    if (recorder_ != nullptr) [[unlikely]]
      recorder_->kernel_end(work_, kernel_clock_ns());
  }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

  void set_work(std::uint64_t elements, double flops, double bytes) noexcept { work_ = {elements, flops, bytes}; }

 private:
  KernelRecorder* recorder_;
  KernelWork work_;
};

}  // namespace brick
