#pragma once
/// A phase's time limit: a phase ends once it has gone --timeout without
/// progress. Only progress restarts the limit, so that events that are not
/// (connection requests beyond -c, which are refused; events of refused
/// ids; wake-ups that find nothing) cannot keep a phase alive: their
/// wake-ups shorten the next wait instead.
///
/// It reads the coarse clock (fabric::coarse_now): a kernel tick's
/// resolution is enough for a limit in milliseconds, and no system call
/// is cheap enough for every wake-up of a loop that handles thousands of
/// events.

#include "fabric/base/wait.hpp"

#include <chrono>
#include <cstdint>

namespace ucmatose {

/// The limit of one phase, from its start.
class progress_timer {
public:
  /// A monotonic clock in milliseconds.
  using clock_fn = std::int64_t (*)();

  /// fabric::coarse_now() in milliseconds.
  static std::int64_t coarse_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(fabric::coarse_now().time_since_epoch()).count();
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

}  // namespace ucmatose
