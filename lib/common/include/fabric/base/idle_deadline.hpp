#pragma once
/// Limits that move forward with progress, for waits that should give up
/// only after a stretch of time in which nothing happened: a deadline that
/// progress restarts, and the same for a loop of thousands of wake-ups.

#include "fabric/base/wait.hpp"

#include <chrono>
#include <cstdint>

namespace fabric {

/// Expires `idle` after the last touch().
class idle_deadline {
public:
  explicit idle_deadline(std::chrono::milliseconds idle) : idle_(idle), until_(deadline::after(idle)) {}

  /// Something happened: restart the idle period.
  void touch() { until_ = deadline::after(idle_); }
  [[nodiscard]] const deadline& get() const noexcept { return until_; }
  [[nodiscard]] std::chrono::milliseconds idle() const noexcept { return idle_; }

private:
  std::chrono::milliseconds idle_;
  deadline until_;
};

/// A phase's time limit: a phase ends once it has gone its limit without
/// progress. Only progress restarts the limit, so that events that are not
/// (connection requests beyond ucmatose's -c, which are refused; events of
/// refused ids; wake-ups that find nothing) cannot keep a phase alive:
/// their wake-ups shorten the next wait instead.
///
/// It reads the coarse clock (coarse_now): a kernel tick's resolution is
/// enough for a limit in milliseconds, and no system call is cheap enough
/// for every wake-up of a loop that handles thousands of events.
class progress_timer {
public:
  /// A monotonic clock in milliseconds.
  using clock_fn = std::int64_t (*)();

  /// coarse_now() in milliseconds.
  static std::int64_t coarse_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(coarse_now().time_since_epoch()).count();
  }

  /// Starts the phase now; `now` is for tests.
  explicit progress_timer(std::chrono::milliseconds limit, clock_fn now = coarse_now_ms)
      : now_(now), limit_(limit.count()), last_(now()) {}

  /// At each wake-up of the phase: whether it moved the phase on. Returns
  /// how long the next wait may take, in milliseconds; 0 once the phase
  /// has gone the limit without progress.
  [[nodiscard]] int next_wait(bool progressed) {
    auto t = now_();
    if (progressed) last_ = t;
    auto left = last_ + limit_ - t;
    return left <= 0 ? 0 : static_cast<int>(left);
  }

private:
  clock_fn now_;
  std::int64_t limit_;
  std::int64_t last_;
};

}  // namespace fabric
