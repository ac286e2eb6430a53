#pragma once
// A circuit breaker with resilience4j's semantics (CircuitBreakerStateMachine):
//
//   Closed    every call is permitted; outcomes go into the sliding window. Once the window holds at
//             least minimum_number_of_calls (for a count-based window: min(minimum, window size)),
//             a failure rate >= failure_rate_threshold or a slow-call rate >= slow_call_rate_threshold
//             opens the breaker. A call is slow when its duration is strictly above
//             slow_call_duration_threshold; a slow call may also be a failure.
//   Open      calls are rejected (counted as not permitted, never as failures). The first permission
//             request strictly after wait_duration_in_open_state moves the breaker to HalfOpen and is
//             answered there. This transition is lazy, driven by callers: no background thread.
//             Outcomes of calls permitted before the breaker opened are still recorded.
//   HalfOpen  exactly permitted_number_of_calls_in_half_open_state calls are permitted (more only
//             after release_permission()); the rest are rejected. Their outcomes fill a fresh
//             count-based window of that size with minimum min(minimum_number_of_calls, permitted):
//             rates at or above a threshold re-open the breaker, rates below both close it. With
//             max_wait_duration_in_half_open_state > 0, a breaker still half-open that long after
//             entering moves to Open at the next permission request (again lazily).
//   Disabled  every call is permitted, nothing is recorded, the state never changes by itself.
//   ForcedOpen every call is rejected, the state never changes by itself.
//
// Closed and HalfOpen start with an empty window; Open keeps the window that opened it; Disabled and
// ForcedOpen have an empty window. transition_to_*() move to a state unconditionally (a move to the
// current state rebuilds it, e.g. clears Closed's window, and is not reported); reset() returns to
// a fresh Closed.
//
// Thread-safe. Permission requests while Closed or Disabled read one atomic; everything else takes a
// mutex. State listeners run outside that mutex, one transition at a time and in the order the
// transitions happened, on a thread that called into the breaker (normally the one whose call caused
// the transition; if another thread is already delivering, that one). A listener may call back into
// the breaker; a transition it causes is delivered after it returns. Listeners must not throw.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "brick/core/error.hpp"
#include "brick/runtime/circuit/sliding_window.hpp"
#include "brick/runtime/clock.hpp"

namespace brick {

enum class CircuitState : std::uint8_t { Closed, Open, HalfOpen, Disabled, ForcedOpen };

std::string_view to_string(CircuitState state) noexcept;

// Defaults are resilience4j's.
struct CircuitBreakerConfig {
  float failure_rate_threshold = 50.0f;    // percent, in (0, 100]
  float slow_call_rate_threshold = 100.0f; // percent, in (0, 100]
  std::chrono::nanoseconds slow_call_duration_threshold = std::chrono::seconds(60);  // > 0
  SlidingWindowType sliding_window_type = SlidingWindowType::CountBased;
  std::uint32_t sliding_window_size = 100;  // calls or seconds, 1..SlidingWindow::kMaxSize
  std::uint32_t minimum_number_of_calls = 100;  // >= 1
  std::chrono::nanoseconds wait_duration_in_open_state = std::chrono::seconds(60);  // > 0
  std::uint32_t permitted_number_of_calls_in_half_open_state = 10;  // 1..SlidingWindow::kMaxSize
  std::chrono::nanoseconds max_wait_duration_in_half_open_state{0};  // >= 0; 0 waits indefinitely

  // Throws InvalidArgument naming the first field out of its domain. A config that validates
  // never fails later: every window it sizes is allocated within SlidingWindow's bound.
  void validate() const;
};

struct CircuitBreakerMetrics {
  // Percentages over the current window; empty until it holds the minimum number of calls.
  std::optional<float> failure_rate;
  std::optional<float> slow_call_rate;
  std::uint32_t buffered_calls = 0;
  std::uint32_t failed_calls = 0;
  std::uint32_t successful_calls = 0;
  std::uint32_t slow_calls = 0;
  std::uint32_t slow_failed_calls = 0;
  std::uint32_t slow_successful_calls = 0;
  // Calls rejected since the current state's window was created.
  std::uint64_t not_permitted_calls = 0;
};

struct CircuitStateTransition {
  CircuitState from;
  CircuitState to;
  Clock::time_point at;
  friend bool operator==(const CircuitStateTransition&, const CircuitStateTransition&) = default;
};

// Thrown by CircuitBreaker::call when the breaker rejects the call.
class CallNotPermitted : public StateError {
 public:
  explicit CallNotPermitted(CircuitState state);
  CircuitState state() const noexcept { return state_; }

 private:
  CircuitState state_;
};

class CircuitBreaker {
 public:
  using StateListener = std::function<void(const CircuitStateTransition&)>;

  // Throws InvalidArgument when the config does not validate. The clock must outlive the breaker.
  explicit CircuitBreaker(const CircuitBreakerConfig& config, Clock& clock = steady_clock());
  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // Asks to make one call. Every true must be followed by on_success, on_error or
  // release_permission; a false is counted as not permitted.
  bool try_acquire_permission();
  // Gives back a HalfOpen permit for a call that was not made; no effect in other states.
  void release_permission();
  void on_success(std::chrono::nanoseconds duration);
  void on_error(std::chrono::nanoseconds duration);

  // Runs fn under the breaker: throws CallNotPermitted when rejected; otherwise times fn with the
  // breaker's clock and records a success, or a failure when fn throws (the exception propagates).
  template <class Fn>
  std::invoke_result_t<Fn&> call(Fn&& fn);

  CircuitState state() const noexcept { return state_.load(std::memory_order_acquire); }
  CircuitBreakerMetrics metrics() const;
  const CircuitBreakerConfig& config() const noexcept { return config_; }
  Clock& clock() const noexcept { return clock_; }

  void transition_to_closed() { transition_to(CircuitState::Closed); }
  void transition_to_open() { transition_to(CircuitState::Open); }
  void transition_to_half_open() { transition_to(CircuitState::HalfOpen); }
  void transition_to_disabled() { transition_to(CircuitState::Disabled); }
  void transition_to_forced_open() { transition_to(CircuitState::ForcedOpen); }
  // A fresh Closed breaker, whatever the state (resilience4j's reset).
  void reset() { transition_to(CircuitState::Closed); }

  void add_state_listener(StateListener listener);

 private:
  using Listeners = std::vector<StateListener>;

  void transition_to(CircuitState to);
  void record(CallOutcome outcome, std::chrono::nanoseconds duration);
  // The helpers below require mutex_ to be held.
  bool acquire_locked(Clock::time_point now);
  void enter(CircuitState to, Clock::time_point now);
  void evaluate_locked(const CallAggregate& totals, Clock::time_point now);
  std::optional<float> rate_locked(const CallAggregate& totals, std::uint32_t part) const noexcept;
  // Runs the listeners for queued transitions; call it with mutex_ released.
  void deliver_transitions() noexcept;

  const CircuitBreakerConfig config_;
  Clock& clock_;

  mutable std::mutex mutex_;
  std::atomic<CircuitState> state_{CircuitState::Closed};
  mutable SlidingWindow window_;
  std::uint32_t minimum_calls_ = 0;
  std::uint64_t not_permitted_calls_ = 0;
  std::uint32_t half_open_permits_ = 0;
  Clock::time_point open_until_{};
  Clock::time_point half_open_until_ = Clock::time_point::max();
  std::vector<CircuitStateTransition> undelivered_;
  std::atomic<bool> has_undelivered_{false};
  std::shared_ptr<const Listeners> listeners_ = std::make_shared<const Listeners>();

  std::mutex delivery_mutex_;
  std::atomic<std::thread::id> delivering_thread_{};
};

template <class Fn>
std::invoke_result_t<Fn&> CircuitBreaker::call(Fn&& fn) {
  if (!try_acquire_permission()) throw CallNotPermitted(state());
  const Clock::time_point start = clock_.now();
  bool returned = false;
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&>>) {
      std::invoke(fn);
      returned = true;
      on_success(clock_.now() - start);
    } else {
      std::invoke_result_t<Fn&> result = std::invoke(fn);
      returned = true;
      on_success(clock_.now() - start);
      return result;
    }
  } catch (...) {
    if (!returned) on_error(clock_.now() - start);
    throw;
  }
}

}  // namespace brick
