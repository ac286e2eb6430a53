#include "brick/runtime/rate_limit/token_bucket.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "brick/core/error.hpp"

namespace brick {

std::string_view to_string(WaitResult result) noexcept {
  switch (result) {
    case WaitResult::Acquired: return "acquired";
    case WaitResult::ExceedsBurst: return "n exceeds the burst";
    case WaitResult::ExceedsDeadline: return "the wait would pass the deadline";
    case WaitResult::Cancelled: return "cancelled";
  }
  return "unknown";
}

namespace {

// 2^63 ns, the first value a signed 64-bit duration cannot hold.
constexpr double kDurationLimitNs = 9223372036854775808.0;

// The time `rate` takes to accrue `tokens` (Go's durationFromTokens), truncated to whole ns.
Clock::duration duration_from_tokens(double rate, double tokens) noexcept {
  if (rate <= 0.0) return Reservation::kNever;
  const double ns = tokens / rate * 1e9;
  if (ns >= kDurationLimitNs) return Reservation::kNever;
  return Clock::duration(static_cast<std::int64_t>(ns));
}

// The tokens `rate` accrues in `d` (Go's tokensFromDuration over Duration.Seconds()).
double tokens_from_duration(double rate, Clock::duration d) noexcept {
  if (rate <= 0.0) return 0.0;
  const std::int64_t ns = d.count();
  const double seconds = static_cast<double>(ns / 1'000'000'000) +
                         static_cast<double>(ns % 1'000'000'000) / 1e9;
  return seconds * rate;
}

Clock::time_point saturating_add(Clock::time_point t, Clock::duration d) noexcept {
  return t > Clock::time_point::max() - d ? Clock::time_point::max() : t + d;
}

double checked_rate(double rate_per_second) {
  if (!(rate_per_second >= 0.0)) {
    throw InvalidArgument(fmt::format(
        "TokenBucket: the rate must be >= 0 events per second (or kInfiniteRate), got {}",
        rate_per_second));
  }
  return rate_per_second;
}

}  // namespace

Reservation::Reservation(Reservation&& other) noexcept
    : bucket_(other.bucket_),
      ok_(std::exchange(other.ok_, false)),
      tokens_(std::exchange(other.tokens_, 0)),
      time_to_act_(other.time_to_act_),
      rate_(other.rate_) {}

Reservation& Reservation::operator=(Reservation&& other) noexcept {
  bucket_ = other.bucket_;
  ok_ = std::exchange(other.ok_, false);
  tokens_ = std::exchange(other.tokens_, 0);
  time_to_act_ = other.time_to_act_;
  rate_ = other.rate_;
  return *this;
}

Clock::duration Reservation::delay() const noexcept {
  return delay_from(bucket_->clock().now());
}

Clock::duration Reservation::delay_from(Clock::time_point t) const noexcept {
  if (!ok_) return kNever;
  return time_to_act_ > t ? time_to_act_ - t : Clock::duration::zero();
}

void Reservation::cancel() noexcept {
  if (!ok_ || tokens_ == 0) return;
  bucket_->cancel(*this);
  tokens_ = 0;
}

TokenBucket::TokenBucket(double rate_per_second, std::size_t burst, Clock& clock)
    : clock_(clock),
      rate_(checked_rate(rate_per_second)),
      burst_(burst),
      tokens_(static_cast<double>(burst)),
      last_(clock.now()),
      last_event_(last_) {}

double TokenBucket::rate() const {
  std::lock_guard lock(mutex_);
  return rate_;
}

std::size_t TokenBucket::burst() const {
  std::lock_guard lock(mutex_);
  return burst_;
}

double TokenBucket::tokens() const {
  std::lock_guard lock(mutex_);
  return advanced_tokens_locked(clock_.now());
}

double TokenBucket::advanced_tokens_locked(Clock::time_point now) const noexcept {
  const double burst = static_cast<double>(burst_);
  if (std::isinf(rate_)) return burst;
  // Time is read under the mutex, so last_ never passes now; a clock that went back adds nothing.
  const Clock::time_point from = now < last_ ? now : last_;
  const double tokens = tokens_ + tokens_from_duration(rate_, now - from);
  return tokens > burst ? burst : tokens;
}

void TokenBucket::set_rate(double rate_per_second) {
  checked_rate(rate_per_second);
  std::lock_guard lock(mutex_);
  const Clock::time_point now = clock_.now();
  tokens_ = advanced_tokens_locked(now);
  last_ = now;
  rate_ = rate_per_second;
}

void TokenBucket::set_burst(std::size_t burst) {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = clock_.now();
  tokens_ = advanced_tokens_locked(now);
  last_ = now;
  burst_ = burst;
}

Reservation TokenBucket::reserve_locked(Clock::time_point now, std::size_t n,
                                        Clock::duration max_wait) {
  if (std::isinf(rate_)) return Reservation(this, true, n, now, rate_);
  if (rate_ == 0.0) {
    const bool ok = n <= burst_;
    if (ok) burst_ -= n;
    // Nothing accrues at rate zero, so there is nothing a cancel could fairly give back.
    return Reservation(this, ok, 0, now, rate_);
  }
  const double tokens = advanced_tokens_locked(now) - static_cast<double>(n);
  const Clock::duration wait =
      tokens < 0.0 ? duration_from_tokens(rate_, -tokens) : Clock::duration::zero();
  if (n > burst_ || wait > max_wait) return Reservation(this, false, 0, Clock::time_point{}, rate_);
  const Clock::time_point time_to_act = saturating_add(now, wait);
  last_ = now;
  tokens_ = tokens;
  last_event_ = time_to_act;
  return Reservation(this, true, n, time_to_act, rate_);
}

bool TokenBucket::allow(std::size_t n) {
  std::lock_guard lock(mutex_);
  return reserve_locked(clock_.now(), n, Clock::duration::zero()).ok();
}

Reservation TokenBucket::reserve(std::size_t n) {
  std::lock_guard lock(mutex_);
  return reserve_locked(clock_.now(), n, Reservation::kNever);
}

WaitResult TokenBucket::wait(std::size_t n, Clock::time_point deadline, std::stop_token stop) {
  {
    std::lock_guard lock(mutex_);
    if (n > burst_ && !std::isinf(rate_)) return WaitResult::ExceedsBurst;
  }
  if (stop.stop_requested()) return WaitResult::Cancelled;
  Reservation reservation = [&] {
    std::lock_guard lock(mutex_);
    const Clock::time_point now = clock_.now();
    const Clock::duration max_wait = deadline == Clock::time_point::max() ? Reservation::kNever
                                     : deadline < now                      ? Clock::duration(-1)
                                                                           : deadline - now;
    return reserve_locked(now, n, max_wait);
  }();
  if (!reservation.ok()) return WaitResult::ExceedsDeadline;
  if (reservation.delay() == Clock::duration::zero()) return WaitResult::Acquired;
  if (!clock_.sleep_until(reservation.time_to_act(), std::move(stop))) {
    reservation.cancel();
    return WaitResult::Cancelled;
  }
  return WaitResult::Acquired;
}

WaitResult TokenBucket::wait(std::size_t n, std::stop_token stop) {
  return wait(n, Clock::time_point::max(), std::move(stop));
}

void TokenBucket::cancel(const Reservation& reservation) noexcept {
  std::lock_guard lock(mutex_);
  const Clock::time_point now = clock_.now();
  if (std::isinf(rate_) || reservation.time_to_act_ < now) return;
  // Tokens reserved after this reservation were priced assuming it; those are not given back.
  const double restore =
      static_cast<double>(reservation.tokens_) -
      tokens_from_duration(reservation.rate_, last_event_ - reservation.time_to_act_);
  if (restore <= 0.0) return;
  const double burst = static_cast<double>(burst_);
  const double tokens = advanced_tokens_locked(now) + restore;
  tokens_ = tokens > burst ? burst : tokens;
  last_ = now;
  if (reservation.time_to_act_ == last_event_) {
    const Clock::time_point previous_event =
        reservation.time_to_act_ +
        duration_from_tokens(reservation.rate_, -static_cast<double>(reservation.tokens_));
    if (previous_event >= now) last_event_ = previous_event;
  }
}

}  // namespace brick
