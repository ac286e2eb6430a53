#include "brick/runtime/batch/thread_pool.hpp"

#include <utility>

#include "brick/core/error.hpp"

namespace brick {
namespace {

inline void cpu_relax() noexcept { __builtin_ia32_pause(); }

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

}  // namespace

ThreadPool::ThreadPool(std::size_t threads, std::chrono::nanoseconds spin)
    : slots_(threads), spin_(spin), slot_state_(threads > 0 ? new Slot[threads] : nullptr) {
  if (threads == 0) throw InvalidArgument("ThreadPool needs at least one thread (the caller)");
  workers_.reserve(threads - 1);
  for (std::size_t slot = 1; slot < threads; ++slot) {
    workers_.emplace_back([this, slot] { worker_loop(slot); });
  }
}

ThreadPool::~ThreadPool() {
  stopping_.store(true, std::memory_order_relaxed);
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  epoch_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool ThreadPool::claim(std::size_t slot, std::uint32_t epoch) noexcept {
  return slot_state_[slot].claimed_epoch.exchange(epoch, std::memory_order_acq_rel) != epoch;
}

void ThreadPool::run_slot(std::size_t slot) noexcept {
  const Range range = balance211(n_, slots_, slot);
  if (range.empty()) return;
  try {
    task_(context_, range, slot);
  } catch (...) {
    const std::lock_guard lock(error_mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::run(std::size_t n, Task task, void* context) {
  if (busy_.exchange(true, std::memory_order_acquire)) {
    throw StateError(
        "ThreadPool::parallel_for called while the pool is running another call (from one of its "
        "own tasks, or from a second thread); the pool runs one call at a time");
  }
  struct Idle {
    std::atomic<bool>& busy;
    ~Idle() { busy.store(false, std::memory_order_release); }
  } idle{busy_};

  if (n == 0) return;
  if (slots_ == 1) {
    task(context, Range{0, n}, 0);
    return;
  }
  task_ = task;
  context_ = context;
  n_ = n;
  error_ = nullptr;
  const std::uint32_t epoch = ++epoch_value_;
  pending_.store(static_cast<std::uint32_t>(slots_ - 1), std::memory_order_relaxed);
  epoch_.store(epoch, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) > 0) epoch_.notify_all();

  run_slot(0);
  // Pieces no worker has picked up yet are cheaper to run here than to wait for.
  for (std::size_t slot = 1; slot < slots_; ++slot) {
    if (claim(slot, epoch)) {
      run_slot(slot);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
  wait_until_done();
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
    now = epoch_.load(std::memory_order_acquire);
    return now != seen;
  };
  if (spin_until(changed, spin_)) return now;
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  while ((now = epoch_.load(std::memory_order_seq_cst)) == seen) epoch_.wait(seen, std::memory_order_seq_cst);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return now;
}

void ThreadPool::worker_loop(std::size_t slot) {
  std::uint32_t seen = 0;
  for (;;) {
    seen = wait_for_new_epoch(seen);
    if (stopping_.load(std::memory_order_relaxed)) return;
    // A failed claim means the caller ran this piece already (this worker woke late); the call's
    // fields may then belong to a newer call, so nothing is read before the claim succeeds.
    if (!claim(slot, seen)) continue;
    run_slot(slot);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
        caller_blocked_.load(std::memory_order_seq_cst)) {
      pending_.notify_one();
    }
  }
}

}  // namespace brick
