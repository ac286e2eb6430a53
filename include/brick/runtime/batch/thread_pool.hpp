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
// A worker learns of a call from one cache line that also holds the call itself (and a copy of a
// small callable), so a piece starts after one transfer between cores, not a chain of them (the
// cost of an empty call is in bench/RESULTS.md).
//
// With a KernelRecorder installed on the calling thread (core/kernel_recorder.hpp), every piece is
// timed where it runs and the caller reports the call, its pieces and its join wait to the recorder
// after the join; without one, a call reads no clock.
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
#include <new>
#include <thread>
#include <type_traits>
#include <vector>

#include "brick/core/kernel_recorder.hpp"
#include "brick/runtime/batch/balance211.hpp"

namespace brick {

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kDefaultSpin{100};
  // More threads than any machine has CPUs for: a count past it is a mistake, not a request.
  static constexpr std::size_t kMaxThreads = 4096;

  // `threads` counts the calling thread (1..kMaxThreads, else InvalidArgument; std::system_error
  // when the OS refuses a thread). `spin` is how long an idle worker (and a caller waiting for
  // workers) polls before blocking; zero blocks at once.
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
    using Stored = std::remove_cv_t<Callable>;
    const Exclusive exclusive(*this);
    // A small callable that does not change when called (a lambda capturing a few references, as
    // most do) is copied into the cache line that announces the call: a worker that sees the call
    // then has the code and the captures without first fetching the caller's stack from its core.
    if constexpr (sizeof(Stored) <= kInlineBytes && alignof(Stored) <= alignof(std::max_align_t) &&
                  std::is_trivially_copyable_v<Stored> && std::is_trivially_destructible_v<Stored> &&
                  std::is_invocable_v<const Stored&, Range, std::size_t>) {
      void* const copy = ::new (static_cast<void*>(call_.inline_callable)) Stored(fn);
      run(n, [](void* context, Range range, std::size_t slot) { (*static_cast<const Stored*>(context))(range, slot); },
          copy);
    } else {
      run(n, [](void* context, Range range, std::size_t slot) { (*static_cast<Callable*>(context))(range, slot); },
          const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
    }
  }

 private:
  using Task = void (*)(void* context, Range range, std::size_t slot);
  static constexpr std::size_t kInlineBytes = 32;

  // Holds the pool for one call: StateError if another call is in flight.
  class Exclusive {
   public:
    explicit Exclusive(ThreadPool& pool);
    ~Exclusive();
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    std::atomic<bool>& busy_;
  };

  struct alignas(64) Slot {
    std::atomic<std::uint32_t> claimed_epoch{0};  // the last call (epoch) whose piece was claimed
  };

  // The current call, on one cache line: the epoch that workers poll, and what they need to run it
  // (written by the caller before it publishes the epoch).
  struct alignas(64) Call {
    std::atomic<std::uint32_t> epoch{0};
    bool timed = false;  // a recorder watches this call: run_slot() times the pieces
    Task task = nullptr;
    void* context = nullptr;
    std::size_t n = 0;
    alignas(std::max_align_t) unsigned char inline_callable[kInlineBytes];
  };
  static_assert(sizeof(Call) == 64);

  void run(std::size_t n, Task task, void* context);
  void stop_workers() noexcept;
  void worker_loop(std::size_t slot);
  std::uint32_t wait_for_new_epoch(std::uint32_t seen);
  void wait_until_done();
  bool claim(std::size_t slot, std::uint32_t epoch) noexcept;
  void run_slot(std::size_t slot, bool on_caller) noexcept;
  void report(KernelRecorder& recorder, std::uint64_t start_ns, std::uint64_t join_start_ns) noexcept;

  const std::size_t slots_;
  const std::chrono::nanoseconds spin_;
  std::unique_ptr<Slot[]> slot_state_;
  // The timed call's pieces, each written by the thread that runs it; read by the caller after the
  // join. Sized once, so a timed call allocates nothing either.
  std::unique_ptr<ParallelPiece[]> pieces_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stopping_{false};  // read by workers that may be late for a call

  Call call_;
  std::uint32_t epoch_value_ = 0;  // the caller's copy of call_.epoch
  std::atomic<bool> busy_{false};  // a call is in flight; only the caller's side touches it

  alignas(64) std::atomic<std::uint32_t> pending_{0};  // worker slots not yet finished
  std::atomic<std::uint32_t> sleepers_{0};             // workers blocked on call_.epoch
  std::atomic<bool> caller_blocked_{false};            // the caller blocked on pending_

  std::mutex error_mutex_;  // only taken when a task throws
  std::exception_ptr error_;
};

}  // namespace brick
