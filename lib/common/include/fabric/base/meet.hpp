#pragma once
/// Meeting a peer that was started about when we were, by the same
/// launcher or by hand: it may not listen yet, or still be busy with an
/// earlier peer. The one rule for every client that dials such a peer, and
/// the two bounds of every check between two hosts.

#include "fabric/base/error.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/base/wait_limit.hpp"

#include <chrono>
#include <utility>

namespace fabric {

/// How long a client waits before it dials again a peer that did not listen yet.
inline constexpr std::chrono::milliseconds redial_interval{50};

/// Whether an error means only that nothing listens there yet: a
/// rejection, an unreachable port, a refused connection.
inline bool not_listening_yet(const error& e) noexcept { return e.code() == exit_code::connect_failed; }

/// Calls `dial` until it returns. While it throws an error that
/// `retry_on` accepts (by default: nothing listens there yet), it is
/// called again every `interval` until `until`; then, and for any other
/// error, the error stands. `before_retry(e)` hears each error retried.
template <class Dial, class RetryOn = bool (*)(const error&) noexcept, class BeforeRetry = void (*)(const error&)>
auto dial_until_listening(const deadline& until, Dial&& dial, RetryOn&& retry_on = not_listening_yet,
                          BeforeRetry&& before_retry = [](const error&) {},
                          std::chrono::milliseconds interval = redial_interval) {
  for (;;) {
    try {
      return dial();
    } catch (const error& e) {
      if (!retry_on(e) || until.expired()) throw;
      before_retry(e);
    }
    wait_readable(-1, deadline::after(interval).min(until));
  }
}

/// The bounds of a check between two hosts. Its peer may come late,
/// still busy with an earlier peer, so meeting it has a deadline of its
/// own; once they met, the check has `work` for the rest, however late
/// the meeting was. Each wait, of the meeting and of the work, takes at
/// most `each` (--timeout) besides.
struct pair_bounds {
  deadline meet = deadline::never();      ///< the last moment to meet the peer
  std::chrono::milliseconds work{10000};  ///< from the meeting to the end
  std::chrono::milliseconds each{10000};  ///< the longest any one wait may take

  /// The bounds from now: meet within `meet_within`, then `work`, each
  /// wait at most `each`.
  static pair_bounds from_now(std::chrono::milliseconds meet_within, std::chrono::milliseconds work,
                              std::chrono::milliseconds each) {
    return {deadline::after(meet_within), work, each};
  }
  /// The waits of the meeting: each at most `each`, all by `meet`.
  [[nodiscard]] wait_limit meeting() const { return wait_limit(each).until(meet); }
  /// The waits of the work, for a caller that just met its peer: each at
  /// most `each`, all within `work` from now.
  [[nodiscard]] wait_limit work_from_now() const { return wait_limit(each).until(deadline::after(work)); }
};

}  // namespace fabric
