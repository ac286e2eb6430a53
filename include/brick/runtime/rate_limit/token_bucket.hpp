#pragma once
// A token bucket with the semantics of Go's golang.org/x/time/rate.Limiter: tokens accrue at `rate`
// per second up to `burst`; the bucket starts full. allow(n) takes n tokens now or nothing;
// reserve(n) takes them now or on credit, telling the caller how long to wait before acting;
// wait(n, deadline) reserves and sleeps on the bucket's clock.
//
//   - n > burst is never admitted (reserve is not ok; wait fails at once), except at an infinite rate.
//   - An infinite rate admits everything, burst 0 included; burst 0 at a finite rate admits only n = 0.
//   - A zero rate never refills: burst is a one-time allowance that admitted events use up (as in Go).
//   - Cancelling a reservation before its time to act returns the tokens that later reservations have
//     not already relied on.
//
// Thread-safe: every operation takes one short mutex; wait() sleeps without holding it.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stop_token>
#include <string_view>

#include "brick/runtime/clock.hpp"

namespace brick {

class TokenBucket;

class Reservation {
 public:
  // The delay reported for a reservation that is not ok: "never".
  static constexpr Clock::duration kNever = Clock::duration::max();

  // Move-only, so that a reservation is cancelled at most once; a moved-from one is not ok.
  Reservation(Reservation&& other) noexcept;
  Reservation& operator=(Reservation&& other) noexcept;
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;
  ~Reservation() = default;

  bool ok() const noexcept { return ok_; }
  Clock::time_point time_to_act() const noexcept { return time_to_act_; }
  // How long to wait, from now on the bucket's clock (or from `t`), before acting; 0 when the time
  // has come, kNever when not ok.
  Clock::duration delay() const noexcept;
  Clock::duration delay_from(Clock::time_point t) const noexcept;
  // Gives the tokens back, as far as later reservations allow (Go's CancelAt(now)). Cancelling
  // after the time to act, twice, a reservation that is not ok or one made at rate zero does nothing.
  void cancel() noexcept;

 private:
  friend class TokenBucket;
  Reservation(TokenBucket* bucket, bool ok, std::size_t tokens, Clock::time_point time_to_act,
              double rate) noexcept
      : bucket_(bucket), ok_(ok), tokens_(tokens), time_to_act_(time_to_act), rate_(rate) {}

  TokenBucket* bucket_;
  bool ok_;
  std::size_t tokens_;
  Clock::time_point time_to_act_;
  double rate_;  // the rate when reserved: tokens given back are priced at it
};

enum class WaitResult : std::uint8_t {
  Acquired,         // the tokens are taken and the time to act has come
  ExceedsBurst,     // n > burst: can never be admitted; nothing taken
  ExceedsDeadline,  // the wait would end after the deadline; nothing taken
  Cancelled,        // stop was requested; the reservation was cancelled
};

std::string_view to_string(WaitResult result) noexcept;

class TokenBucket {
 public:
  static constexpr double kInfiniteRate = std::numeric_limits<double>::infinity();

  // `rate_per_second` must be >= 0 (or kInfiniteRate); throws InvalidArgument otherwise. The clock
  // must outlive the bucket, and the bucket the reservations it hands out.
  TokenBucket(double rate_per_second, std::size_t burst, Clock& clock = steady_clock());
  TokenBucket(const TokenBucket&) = delete;
  TokenBucket& operator=(const TokenBucket&) = delete;

  double rate() const;
  std::size_t burst() const;
  // Tokens available now (negative while reservations are outstanding on credit).
  double tokens() const;
  // Both take effect now; tokens accrued so far at the old settings are kept.
  void set_rate(double rate_per_second);
  void set_burst(std::size_t burst);

  bool allow(std::size_t n = 1);
  [[nodiscard]] Reservation reserve(std::size_t n = 1);
  // Blocks on the bucket's clock until n tokens are ours. Fails at once, taking nothing, when n >
  // burst or the wait would end after `deadline`; a stop request while waiting cancels.
  [[nodiscard]] WaitResult wait(std::size_t n, Clock::time_point deadline, std::stop_token stop = {});
  [[nodiscard]] WaitResult wait(std::size_t n = 1, std::stop_token stop = {});

  Clock& clock() const noexcept { return clock_; }

 private:
  friend class Reservation;

  Reservation reserve_locked(Clock::time_point now, std::size_t n, Clock::duration max_wait);
  double advanced_tokens_locked(Clock::time_point now) const noexcept;
  void cancel(const Reservation& reservation) noexcept;

  Clock& clock_;
  mutable std::mutex mutex_;
  double rate_;
  std::size_t burst_;
  double tokens_;
  Clock::time_point last_;        // when tokens_ was last brought up to date
  Clock::time_point last_event_;  // the latest time to act handed out
};

}  // namespace brick
