#include "brick/runtime/batch/thread_pool.hpp"

#include <utility>

#include <fmt/format.h>

#include "brick/core/error.hpp"

namespace brick {
namespace {

inline void cpu_relax() noexcept { __builtin_ia32_pause(); }

// Asks for the cache line at p in a writable state, ahead of a write: PREFETCHW (a no-op on CPUs
// without it).
inline void prefetch_for_write(const void* p) noexcept {
  __asm__ volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
}

// Polls `done` until it returns true or `budget` has passed; the clock is read every 64 polls.
template <class Done>
bool spin_until(Done done, std::chrono::nanoseconds budget) {
  if (budget.count() <= 0) return done();
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

std::size_t checked_thread_count(std::size_t threads) {
  if (threads == 0) throw InvalidArgument("ThreadPool needs at least one thread (the caller)");
  if (threads > ThreadPool::kMaxThreads) {
    throw InvalidArgument(
        fmt::format("ThreadPool: {} threads is more than the limit of {}", threads, ThreadPool::kMaxThreads));
  }
  return threads;
}

}  // namespace

ThreadPool::ThreadPool(std::size_t threads, std::chrono::nanoseconds spin)
    : slots_(checked_thread_count(threads)),
      spin_(spin),
      slot_state_(new Slot[slots_]),
      pieces_(new ParallelPiece[slots_]) {
  workers_.reserve(threads - 1);
  try {
    for (std::size_t slot = 1; slot < threads; ++slot) {
      workers_.emplace_back([this, slot] { worker_loop(slot); });
    }
  } catch (...) {
    stop_workers();  // the OS refused a thread: join the ones started, then report it
    throw;
  }
}

ThreadPool::~ThreadPool() { stop_workers(); }

void ThreadPool::stop_workers() noexcept {
  stopping_.store(true, std::memory_order_relaxed);
  call_.epoch.fetch_add(1, std::memory_order_seq_cst);
  call_.epoch.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

// Every call claims every worker slot exactly once, so the slot still holds the previous epoch
// until this call's claim. Comparing against it (not merely "not yet this epoch") keeps a worker
// that stalled between reading epoch E and claiming from taking a slot of a later call.
bool ThreadPool::claim(std::size_t slot, std::uint32_t epoch) noexcept {
  std::uint32_t previous = epoch - 1;
  return slot_state_[slot].claimed_epoch.compare_exchange_strong(previous, epoch, std::memory_order_acq_rel,
                                                                 std::memory_order_relaxed);
}

// Taken before anything of the call is written: a nested or concurrent call must not overwrite the
// running call's inline copy of its callable.
ThreadPool::Exclusive::Exclusive(ThreadPool& pool) : busy_(pool.busy_) {
  if (busy_.exchange(true, std::memory_order_acquire)) {
    throw StateError(
        "ThreadPool::parallel_for called while the pool is running another call (from one of its "
        "own tasks, or from a second thread); the pool runs one call at a time");
  }
}

ThreadPool::Exclusive::~Exclusive() { busy_.store(false, std::memory_order_release); }

void ThreadPool::run_slot(std::size_t slot, bool on_caller) noexcept {
  const Range range = balance211(call_.n, slots_, slot);
  if (range.empty()) return;
  const bool timed = call_.timed;
  const std::uint64_t start_ns = timed ? kernel_clock_ns() : 0;
  try {
    call_.task(call_.context, range, slot);
  } catch (...) {
    const std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
  if (timed) pieces_[slot] = {slot, range.begin, range.end, start_ns, kernel_clock_ns(), on_caller};
}

// The pieces with work are packed to the front of pieces_ in slot order (empty ones were not
// written by this call).
void ThreadPool::report(KernelRecorder& recorder, std::uint64_t start_ns, std::uint64_t join_start_ns) noexcept {
  std::size_t used = 0;
  for (std::size_t slot = 0; slot < slots_; ++slot) {
    if (!balance211(call_.n, slots_, slot).empty()) pieces_[used++] = pieces_[slot];
  }
  recorder.parallel_call({start_ns, join_start_ns, kernel_clock_ns(), std::span<const ParallelPiece>(pieces_.get(), used)});
}

void ThreadPool::run(std::size_t n, Task task, void* context) {
  if (n == 0) return;
  KernelRecorder* const recorder = active_kernel_recorder();
  const std::uint64_t start_ns = recorder != nullptr ? kernel_clock_ns() : 0;
  if (slots_ == 1) {
    task(context, Range{0, n}, 0);
    if (recorder != nullptr) [[unlikely]] {
      const std::uint64_t end_ns = kernel_clock_ns();
      pieces_[0] = {0, 0, n, start_ns, end_ns, true};
      recorder->parallel_call({start_ns, end_ns, end_ns, std::span<const ParallelPiece>(pieces_.get(), 1)});
    }
    return;
  }
  call_.timed = recorder != nullptr;
  call_.task = task;
  call_.context = context;
  call_.n = n;
  error_ = nullptr;
  const std::uint32_t epoch = ++epoch_value_;
  pending_.store(static_cast<std::uint32_t>(slots_ - 1), std::memory_order_relaxed);
  call_.epoch.store(epoch, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) call_.epoch.notify_all();

  run_slot(0, true);
  // Pieces no worker has picked up yet are cheaper to run here than to wait for.
  // A plain read first: a failed compare-exchange would still take the line from the worker, which
  // would then wait for it at the start of the next call.
  for (std::size_t slot = 1; slot < slots_; ++slot) {
    if (slot_state_[slot].claimed_epoch.load(std::memory_order_relaxed) != epoch && claim(slot, epoch)) {
      run_slot(slot, true);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  const std::uint64_t join_start_ns = recorder != nullptr ? kernel_clock_ns() : 0;
  wait_until_done();
  if (recorder != nullptr) [[unlikely]] report(*recorder, start_ns, join_start_ns);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::wait_until_done() {
  if (spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; }, spin_)) return;
  caller_blocked_.store(true, std::memory_order_seq_cst);
  for (std::uint32_t left; (left = pending_.load(std::memory_order_seq_cst)) != 0;) {
    pending_.wait(left, std::memory_order_seq_cst);
  }
  caller_blocked_.store(false, std::memory_order_relaxed);
}

std::uint32_t ThreadPool::wait_for_new_epoch(std::uint32_t seen) {
  std::uint32_t now = seen;
  const auto changed = [&] {
    now = call_.epoch.load(std::memory_order_acquire);
    return now != seen;
  };
  if (spin_until(changed, spin_)) return now;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while ((now = call_.epoch.load(std::memory_order_seq_cst)) == seen) call_.epoch.wait(seen, std::memory_order_seq_cst);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return now;
}

void ThreadPool::worker_loop(std::size_t slot) {
  std::uint32_t seen = 0;
  for (;;) {
    // The caller may have read this slot's line to see whether the piece was claimed; take it back
    // while idle, so that the next claim does not wait for it.
    prefetch_for_write(&slot_state_[slot]);
    seen = wait_for_new_epoch(seen);
    if (stopping_.load(std::memory_order_relaxed)) return;
    // A failed claim means the caller ran this piece already (this worker woke late); the call's
    // fields may then belong to a newer call, so nothing is read before the claim succeeds.
    if (!claim(slot, seen)) continue;
    run_slot(slot, false);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_blocked_.load(std::memory_order_seq_cst)) {
      pending_.notify_one();
    }
  }
}

}  // namespace brick
