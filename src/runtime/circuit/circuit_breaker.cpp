#include "brick/runtime/circuit/circuit_breaker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace brick {

std::string_view to_string(CircuitState state) noexcept {
  switch (state) {
    case CircuitState::Closed: return "Closed";
    case CircuitState::Open: return "Open";
    case CircuitState::HalfOpen: return "HalfOpen";
    case CircuitState::Disabled: return "Disabled";
    case CircuitState::ForcedOpen: return "ForcedOpen";
  }
  return "unknown";
}

namespace {

void check_percentage(std::string_view field, float value) {
  if (!(value > 0.0f && value <= 100.0f)) {
    throw InvalidArgument(
        fmt::format("CircuitBreakerConfig.{} must be a percentage in (0, 100], got {}", field, value));
  }
}

void check_at_least_one(std::string_view field, std::uint32_t value) {
  if (value == 0) throw InvalidArgument(fmt::format("CircuitBreakerConfig.{} must be at least 1, got 0", field));
}

// A field that sizes a sliding window (allocated when the breaker enters the state that uses it).
void check_window_size(std::string_view field, std::uint32_t value) {
  if (value == 0 || value > SlidingWindow::kMaxSize) {
    throw InvalidArgument(fmt::format("CircuitBreakerConfig.{} must be in 1..{} (it sizes a sliding window), got {}",
                                      field, SlidingWindow::kMaxSize, value));
  }
}

void check_positive(std::string_view field, std::chrono::nanoseconds value) {
  if (value <= std::chrono::nanoseconds::zero()) {
    throw InvalidArgument(fmt::format("CircuitBreakerConfig.{} must be positive, got {} ns", field,
                                      value.count()));
  }
}

Clock::time_point saturating_add(Clock::time_point t, Clock::duration d) noexcept {
  return t > Clock::time_point::max() - d ? Clock::time_point::max() : t + d;
}

}  // namespace

void CircuitBreakerConfig::validate() const {
  check_percentage("failure_rate_threshold", failure_rate_threshold);
  check_percentage("slow_call_rate_threshold", slow_call_rate_threshold);
  check_positive("slow_call_duration_threshold", slow_call_duration_threshold);
  if (sliding_window_type != SlidingWindowType::CountBased &&
      sliding_window_type != SlidingWindowType::TimeBased) {
    throw InvalidArgument(fmt::format("CircuitBreakerConfig.sliding_window_type is not a known type ({})",
                                      static_cast<int>(sliding_window_type)));
  }
  check_window_size("sliding_window_size", sliding_window_size);
  check_at_least_one("minimum_number_of_calls", minimum_number_of_calls);
  check_positive("wait_duration_in_open_state", wait_duration_in_open_state);
  check_window_size("permitted_number_of_calls_in_half_open_state",
                    permitted_number_of_calls_in_half_open_state);
  if (max_wait_duration_in_half_open_state < std::chrono::nanoseconds::zero()) {
    throw InvalidArgument(fmt::format(
        "CircuitBreakerConfig.max_wait_duration_in_half_open_state must not be negative, got {} ns",
        max_wait_duration_in_half_open_state.count()));
  }
}

CallNotPermitted::CallNotPermitted(CircuitState state)
    : StateError(fmt::format("circuit breaker is {}: call not permitted", to_string(state))),
      state_(state) {}

namespace {

const CircuitBreakerConfig& validated(const CircuitBreakerConfig& config) {
  config.validate();
  return config;
}

// resilience4j caps the minimum of a count-based window at its size, so that a full window decides.
std::uint32_t closed_minimum(const CircuitBreakerConfig& config) noexcept {
  return config.sliding_window_type == SlidingWindowType::CountBased
             ? std::min(config.minimum_number_of_calls, config.sliding_window_size)
             : config.minimum_number_of_calls;
}

}  // namespace

CircuitBreaker::CircuitBreaker(const CircuitBreakerConfig& config, Clock& clock)
    : config_(validated(config)),
      clock_(clock),
      window_(config_.sliding_window_type, config_.sliding_window_size),
      minimum_calls_(closed_minimum(config_)) {}

bool CircuitBreaker::try_acquire_permission() {
  const CircuitState current = state_.load(std::memory_order_acquire);
  if (current == CircuitState::Closed || current == CircuitState::Disabled) return true;
  bool permitted = false;
  {
    std::lock_guard lock(mutex_);
    permitted = acquire_locked(clock_.now());
  }
  deliver_transitions();
  return permitted;
}

bool CircuitBreaker::acquire_locked(Clock::time_point now) {
  switch (state_.load(std::memory_order_relaxed)) {
    case CircuitState::Closed:
    case CircuitState::Disabled:
      return true;
    case CircuitState::Open:
      if (now > open_until_) {
        enter(CircuitState::HalfOpen, now);
        return acquire_locked(now);
      }
      break;
    case CircuitState::HalfOpen:
      if (now >= half_open_until_) {
        enter(CircuitState::Open, now);
        break;
      }
      if (half_open_permits_ > 0) {
        --half_open_permits_;
        return true;
      }
      break;
    case CircuitState::ForcedOpen:
      break;
  }
  ++not_permitted_calls_;
  return false;
}

void CircuitBreaker::release_permission() {
  std::lock_guard lock(mutex_);
  if (state_.load(std::memory_order_relaxed) == CircuitState::HalfOpen &&
      half_open_permits_ < config_.permitted_number_of_calls_in_half_open_state) {
    ++half_open_permits_;
  }
}

void CircuitBreaker::on_success(std::chrono::nanoseconds duration) {
  record(duration > config_.slow_call_duration_threshold ? CallOutcome::SlowSuccess
                                                         : CallOutcome::Success,
         duration);
}

void CircuitBreaker::on_error(std::chrono::nanoseconds duration) {
  record(duration > config_.slow_call_duration_threshold ? CallOutcome::SlowFailure
                                                         : CallOutcome::Failure,
         duration);
}

void CircuitBreaker::record(CallOutcome outcome, std::chrono::nanoseconds duration) {
  {
    std::lock_guard lock(mutex_);
    const Clock::time_point now = clock_.now();
    switch (state_.load(std::memory_order_relaxed)) {
      case CircuitState::Disabled:
      case CircuitState::ForcedOpen:
        return;
      case CircuitState::Open:
        // A call permitted before the breaker opened still counts towards the window that opened it.
        window_.record(outcome, duration, now);
        break;
      case CircuitState::Closed:
      case CircuitState::HalfOpen:
        evaluate_locked(window_.record(outcome, duration, now), now);
        break;
    }
  }
  deliver_transitions();
}

std::optional<float> CircuitBreaker::rate_locked(const CallAggregate& totals,
                                                 std::uint32_t part) const noexcept {
  if (totals.calls == 0 || totals.calls < minimum_calls_) return std::nullopt;
  return static_cast<float>(part) * 100.0f / static_cast<float>(totals.calls);
}

void CircuitBreaker::evaluate_locked(const CallAggregate& totals, Clock::time_point now) {
  const std::optional<float> failure_rate = rate_locked(totals, totals.failed_calls);
  const std::optional<float> slow_call_rate = rate_locked(totals, totals.slow_calls);
  if (!failure_rate || !slow_call_rate) return;
  const bool exceeded = *failure_rate >= config_.failure_rate_threshold ||
                        *slow_call_rate >= config_.slow_call_rate_threshold;
  const CircuitState current = state_.load(std::memory_order_relaxed);
  if (exceeded) {
    enter(CircuitState::Open, now);
  } else if (current == CircuitState::HalfOpen) {
    enter(CircuitState::Closed, now);
  }
}

void CircuitBreaker::enter(CircuitState to, Clock::time_point now) {
  const CircuitState from = state_.load(std::memory_order_relaxed);
  switch (to) {
    case CircuitState::Closed:
      window_ = SlidingWindow(config_.sliding_window_type, config_.sliding_window_size);
      minimum_calls_ = closed_minimum(config_);
      not_permitted_calls_ = 0;
      break;
    case CircuitState::Open:
      open_until_ = saturating_add(now, config_.wait_duration_in_open_state);
      break;
    case CircuitState::HalfOpen: {
      const std::uint32_t permitted = config_.permitted_number_of_calls_in_half_open_state;
      window_ = SlidingWindow(SlidingWindowType::CountBased, permitted);
      minimum_calls_ = std::min(config_.minimum_number_of_calls, permitted);
      not_permitted_calls_ = 0;
      half_open_permits_ = permitted;
      half_open_until_ = config_.max_wait_duration_in_half_open_state > Clock::duration::zero()
                             ? saturating_add(now, config_.max_wait_duration_in_half_open_state)
                             : Clock::time_point::max();
      break;
    }
    case CircuitState::Disabled:
    case CircuitState::ForcedOpen:
      // Neither state records outcomes: the smallest window stands for "no metrics".
      window_ = SlidingWindow(SlidingWindowType::CountBased, 1);
      not_permitted_calls_ = 0;
      break;
  }
  state_.store(to, std::memory_order_release);
  if (from != to) {
    undelivered_.push_back({from, to, now});
    has_undelivered_.store(true, std::memory_order_release);
  }
}

CircuitBreakerMetrics CircuitBreaker::metrics() const {
  std::lock_guard lock(mutex_);
  const CallAggregate totals = window_.snapshot(clock_.now());
  CircuitBreakerMetrics metrics;
  metrics.failure_rate = rate_locked(totals, totals.failed_calls);
  metrics.slow_call_rate = rate_locked(totals, totals.slow_calls);
  metrics.buffered_calls = totals.calls;
  metrics.failed_calls = totals.failed_calls;
  metrics.successful_calls = totals.calls - totals.failed_calls;
  metrics.slow_calls = totals.slow_calls;
  metrics.slow_failed_calls = totals.slow_failed_calls;
  metrics.slow_successful_calls = totals.slow_calls - totals.slow_failed_calls;
  metrics.not_permitted_calls = not_permitted_calls_;
  return metrics;
}

void CircuitBreaker::transition_to(CircuitState to) {
  {
    std::lock_guard lock(mutex_);
    enter(to, clock_.now());
  }
  deliver_transitions();
}

void CircuitBreaker::add_state_listener(StateListener listener) {
  std::lock_guard lock(mutex_);
  auto listeners = std::make_shared<Listeners>(*listeners_);
  listeners->push_back(std::move(listener));
  listeners_ = std::move(listeners);
}

void CircuitBreaker::deliver_transitions() noexcept {
  if (!has_undelivered_.load(std::memory_order_acquire)) return;
  // A transition caused by a listener is picked up by the delivery loop already running below it.
  if (delivering_thread_.load(std::memory_order_relaxed) == std::this_thread::get_id()) return;
  std::lock_guard delivery(delivery_mutex_);
  delivering_thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  for (;;) {
    std::vector<CircuitStateTransition> batch;
    std::shared_ptr<const Listeners> listeners;
    {
      std::lock_guard lock(mutex_);
      if (undelivered_.empty()) break;
      batch.swap(undelivered_);
      has_undelivered_.store(false, std::memory_order_release);
      listeners = listeners_;
    }
    for (const CircuitStateTransition& transition : batch) {
      for (const StateListener& listener : *listeners) listener(transition);
    }
  }
  delivering_thread_.store(std::thread::id{}, std::memory_order_relaxed);
}

}  // namespace brick
