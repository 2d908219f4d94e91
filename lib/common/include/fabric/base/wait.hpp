#pragma once
/// Bounded waits: deadlines, interruption by SIGINT/SIGTERM, and polling a
/// file descriptor with both.

#include "fabric/base/error.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <optional>
#include <span>
#include <utility>

namespace fabric {

using clock = std::chrono::steady_clock;

/// Time between two points, or from one until now, as the reports count
/// it: fractional milliseconds or microseconds.
inline double ms_between(clock::time_point from, clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}
inline double us_between(clock::time_point from, clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}
inline double ms_since(clock::time_point t) { return ms_between(t, clock::now()); }
inline double us_since(clock::time_point t) { return us_between(t, clock::now()); }

/// Now on `clock` (CLOCK_MONOTONIC) at the resolution of a kernel tick,
/// from CLOCK_MONOTONIC_COARSE, which the vDSO answers without a system
/// call whatever the clock source (the HPET of an emulated guest makes
/// every precise read one): for deadlines and limits in milliseconds
/// taken many times a second. It may lag clock::now() by up to a tick.
clock::time_point coarse_now();

/// A point in time after which a wait gives up; `never()` for none.
class deadline {
public:
  /// A deadline `ms` from now; zero or negative means already expired.
  static deadline after(std::chrono::milliseconds ms) { return deadline(clock::now() + ms); }
  /// A deadline at `t`: for a caller that has read the clock already
  /// (a clock read can be a system call).
  static deadline at(clock::time_point t) { return deadline(t); }
  static deadline never() { return deadline(std::nullopt); }

  [[nodiscard]] bool expired() const { return at_ && clock::now() >= *at_; }
  /// Milliseconds left, rounded up, for poll(2); -1 when unbounded.
  [[nodiscard]] int poll_timeout() const;
  /// The earlier of two deadlines.
  [[nodiscard]] deadline min(const deadline& other) const;

private:
  explicit deadline(std::optional<clock::time_point> at) : at_(at) {}
  std::optional<clock::time_point> at_;
};

/// A deadline `within` from when it is first asked for, not from when it
/// is made: a wait that ends in its first few polls reads no clock (under
/// emulation a clock read is a system call and an emulated timer read,
/// microseconds each, several times a ping).
class lazy_deadline {
public:
  explicit lazy_deadline(std::chrono::milliseconds within) noexcept : within_(within) {}
  /// Started already: `until` as it is.
  explicit lazy_deadline(const deadline& until) noexcept : until_(until) {}

  /// The deadline, started now if it was not yet.
  [[nodiscard]] const deadline& get() {
    if (!until_) until_ = deadline::after(within_);
    return *until_;
  }
  [[nodiscard]] bool expired() { return get().expired(); }

private:
  std::chrono::milliseconds within_{};
  std::optional<deadline> until_;
};

/// Routes SIGINT and SIGTERM to a flag and a self-pipe so that every wait
/// below wakes up. Idempotent; called by cli::run before the tool runs.
void install_interrupt_handler();

/// A helper thread (std::thread or std::jthread) started with every signal
/// blocked: Ctrl-C stays with the threads that wait for it.
template <class Thread, class... Args>
Thread start_without_signals(Args&&... args) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  struct restore {
    sigset_t mask;
    ~restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restored{old};
  return Thread(std::forward<Args>(args)...);
}

/// True once SIGINT or SIGTERM has arrived, or stop() was called.
bool interrupted() noexcept;

/// Stops the run as a signal would, for another reason: every wait below
/// wakes up and throws error(code, reason). `reason` must outlive the run
/// (a string literal). The first reason, a signal's or a stop's, stands.
void stop(exit_code code, const char* reason) noexcept;

/// Throws error(exit_code::interrupted), or the error stop() named, once
/// the run was told to stop.
void throw_if_interrupted();

/// The read end of the self-pipe; readable once interrupted.
int interrupt_fd() noexcept;

/// Waits until `fd` is readable. Returns false when the deadline passes;
/// throws error(exit_code::interrupted) on a signal. A negative fd is never
/// readable, which makes this an interruptible sleep.
bool wait_readable(int fd, const deadline& until);

/// Waits until `fd` is writable (or has an error); false when the deadline
/// passes; throws error(exit_code::interrupted) on a signal.
bool wait_writable(int fd, const deadline& until);

/// Waits until one of `fds` is readable and returns its index, or -1 when
/// the deadline passes; throws error(exit_code::interrupted) on a signal.
int wait_any(std::span<const int> fds, const deadline& until);

/// As above, for an inactivity timeout: -1 when none of `fds` became
/// readable for `quiet`. The clock is never read, which matters in loops that
/// wait once per event (under emulation a clock read can be a system call).
int wait_any(std::span<const int> fds, std::chrono::milliseconds quiet);

/// Sets O_NONBLOCK on a descriptor, so that reads after poll never block.
void set_nonblocking(int fd);

}  // namespace fabric
