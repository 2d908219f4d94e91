#pragma once
/// What --timeout bounds, in every tool: the longest any one wait may
/// take, for a host name to be looked up, an address or a route to
/// resolve, a connection to be set up, and each answer or completion from
/// the peer. Every wait of a run is derived from one wait_limit, each wait
/// getting all of it from when it starts; so a run gives up at most that
/// long after its last progress, and never waits without a bound unless
/// it says so (a server waiting for its first client).

#include "fabric/base/idle_deadline.hpp"
#include "fabric/base/wait.hpp"

#include <chrono>
#include <optional>

namespace fabric {

/// The bound of each wait of a run.
class wait_limit {
public:
  /// Each wait may take `each`.
  explicit wait_limit(std::chrono::milliseconds each) noexcept : each_(each) {}

  /// Every wait ends by `until`, however long it started before: for a
  /// check bounded as a whole rather than wait by wait.
  [[nodiscard]] static wait_limit by(const deadline& until) noexcept { return wait_limit(std::nullopt, until); }
  /// The same limit, every wait also ending by `until`: for a run of
  /// waits bounded both one by one and as a whole.
  [[nodiscard]] wait_limit until(const deadline& until) const noexcept { return wait_limit(each_, by_.min(until)); }

  /// Whether the whole run's time is up (never, without `by`).
  [[nodiscard]] bool expired() const { return by_.expired(); }

  /// The deadline of one wait that starts now.
  [[nodiscard]] deadline next() const { return each_ ? deadline::after(*each_).min(by_) : by_; }
  /// The deadline of one wait that started at `start` (for a caller that
  /// read the clock already: a clock read can be a system call).
  [[nodiscard]] deadline next_from(clock::time_point start) const {
    return each_ ? deadline::at(start + *each_).min(by_) : by_;
  }
  /// A run of waits that each restart with progress (a datagram, a completion).
  [[nodiscard]] idle_deadline idle() const { return idle_deadline(each()); }

  /// How long one wait that starts now may take: for waits counted in
  /// time rather than by a deadline, and for messages.
  [[nodiscard]] std::chrono::milliseconds each() const;
  /// The same in whole milliseconds, at least 1: what C calls that take
  /// a timeout (rdma_resolve_addr, rdma_resolve_route) are given.
  [[nodiscard]] int ms() const;

private:
  wait_limit(std::optional<std::chrono::milliseconds> each, const deadline& by) noexcept : each_(each), by_(by) {}

  std::optional<std::chrono::milliseconds> each_;
  deadline by_ = deadline::never();
};

}  // namespace fabric
