#pragma once
// A persistent pool of threads for data-parallel loops over [0, n): parallel_for splits the range
// with balance211 into size() contiguous pieces, one per slot, and returns when all are done. The
// calling thread takes part (it runs slot 0), so ThreadPool(1) has no worker and runs inline.
//
// Between calls the workers spin for a short while (a decode step calls back within microseconds),
// then block on a futex so an idle pool costs no CPU. A slot whose worker has not picked it up by the
// time the caller finishes its own piece is run by the caller itself: a worker that is descheduled
// (the other CPU busy) or asleep delays nothing.
//
// A call allocates nothing and takes no lock. The pool runs one call at a time: calling
// parallel_for from inside a task of the same pool, or from a second thread while a call is in
// flight, throws StateError (and does not run anything).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "brick/runtime/batch/balance211.hpp"

namespace brick {

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kDefaultSpin{100};

  // `threads` counts the calling thread (>= 1, else InvalidArgument). `spin` is how long an idle
  // worker (and a caller waiting for workers) polls before blocking; zero blocks at once.
  explicit ThreadPool(std::size_t threads, std::chrono::nanoseconds spin = kDefaultSpin);
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const noexcept { return slots_; }

  // Calls fn(Range range, std::size_t slot) once for every slot whose balance211 range of [0, n) is
  // not empty; slot is in [0, size()) and names the piece, not an OS thread (per-slot scratch stays
  // private: no two calls with the same slot overlap). Returns when every piece has run.
  // If fn throws, the other pieces still run to completion and the first exception is rethrown
  // here; the pool stays usable.
  template <class Fn>
  void parallel_for(std::size_t n, Fn&& fn) {
    using Callable = std::remove_reference_t<Fn>;
    run(n, [](void* context, Range range, std::size_t slot) { (*static_cast<Callable*>(context))(range, slot); },
        const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
  }

 private:
  using Task = void (*)(void* context, Range range, std::size_t slot);

  struct alignas(64) Slot {
    std::atomic<std::uint32_t> claimed_epoch{0};  // the epoch whose piece this slot ran last
  };

  void run(std::size_t n, Task task, void* context);
  void worker_loop(std::size_t slot);
  std::uint32_t wait_for_new_epoch(std::uint32_t seen);
  void wait_until_done();
  bool claim(std::size_t slot, std::uint32_t epoch) noexcept;
  void run_slot(std::size_t slot) noexcept;

  const std::size_t slots_;
  const std::chrono::nanoseconds spin_;
  std::unique_ptr<Slot[]> slot_state_;
  std::vector<std::thread> workers_;

  // The current call; written by the caller before it publishes a new epoch.
  Task task_ = nullptr;
  void* context_ = nullptr;
  std::size_t n_ = 0;
  std::uint32_t epoch_value_ = 0;

  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  alignas(64) std::atomic<std::uint32_t> pending_{0};  // worker slots not yet finished
  std::atomic<std::uint32_t> sleepers_{0};             // workers blocked on epoch_
  std::atomic<bool> caller_blocked_{false};            // the caller blocked on pending_
  std::atomic<bool> busy_{false};
  std::atomic<bool> stopping_{false};  // read by workers that may be late for a call

  std::mutex error_mutex_;  // only taken when a task throws
  std::exception_ptr error_;
};

}  // namespace brick
