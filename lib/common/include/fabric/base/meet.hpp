#pragma once
/// Meeting a peer that was started about when we were, by the same
/// launcher or by hand: it may not listen yet, or still be busy with an
/// earlier peer. The one rule for every client that dials such a peer, and
/// the two bounds of every check between two hosts.

#include "fabric/base/error.hpp"
#include "fabric/base/wait.hpp"
#include "fabric/base/wait_limit.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fabric {

/// How long a client waits before it dials again a peer that did not listen yet.
inline constexpr std::chrono::milliseconds redial_interval{50};

/// How often a meeting asks whether its peer is gone (pair_bounds::peer_gone).
inline constexpr std::chrono::milliseconds gone_check_interval{1000};

/// The longest pair_bounds::key: a bandwidth check's request carries 36
/// bytes of its own after it, of the 56 an RC connection request may carry.
inline constexpr std::size_t max_key_bytes = 20;

/// Whether a connection request's private data starts with `key` (any
/// request does, for an empty key).
inline bool carries_key(std::span<const std::byte> private_data, std::span<const std::byte> key) noexcept {
  return private_data.size() >= key.size() && std::equal(key.begin(), key.end(), private_data.begin());
}

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
  /// Asked when the meeting's deadline passed and the peer has not come:
  /// true when the peer is known to be on its way (held up by an earlier
  /// peer of its own), and the meeting then waits another `work`. Unset,
  /// or false, the deadline stands.
  std::function<bool()> peer_on_its_way;
  /// Asked while meeting, once a gone_check_interval: why the peer will
  /// not come, when that is known (its process ended, or it stopped
  /// answering), and the meeting then ends at once (peer_gone_error).
  /// Unset, or nullopt, the meeting waits its time.
  std::function<std::optional<std::string>()> peer_gone;
  /// What the client's connection request carries ahead of its own
  /// private data (at most max_key_bytes), and what the server requires
  /// of a request: one without it, a stranger dialling the port, is
  /// refused and the meeting goes on. Empty: any request is the peer's.
  std::vector<std::byte> key;

  /// The bounds from now: meet within `meet_within`, then `work`, each
  /// wait at most `each`.
  static pair_bounds from_now(std::chrono::milliseconds meet_within, std::chrono::milliseconds work,
                              std::chrono::milliseconds each) {
    return {deadline::after(meet_within), work, each, {}, {}, {}};
  }
  /// The waits of a meeting that ends by `until` (`meet`, or a later
  /// deadline of the meeting): each at most `each`.
  [[nodiscard]] wait_limit meeting_until(const deadline& until) const { return wait_limit(each).until(until); }
  /// The waits of the work, for a caller that just met its peer: each at
  /// most `each`, all within `work` from now.
  [[nodiscard]] wait_limit work_from_now() const { return wait_limit(each).until(deadline::after(work)); }
  /// The wait for the answer to a connection request sent while meeting:
  /// `each` in full, however close the meeting's deadline. The peer may
  /// hold the request already, about to accept it; given up, its accept
  /// fails (the request is dead in its hands) while this side dials again,
  /// and the pair fails on both sides.
  [[nodiscard]] wait_limit answer() const { return wait_limit(each); }
  /// The meeting's next deadline once the last one passed: another `work`
  /// when the peer is on its way, nullopt when the deadline stands.
  [[nodiscard]] std::optional<deadline> later_meeting() const {
    if (!peer_on_its_way || !peer_on_its_way()) return std::nullopt;
    return deadline::after(work);
  }
};

/// The error of a meeting the peer did not come to: it never listened or
/// dialled in time, or it is gone. Such a failure is the peer's absence,
/// not this side's own: the peer's side, when it said anything, says why.
class peer_absent : public error {
public:
  using error::error;
};

/// The error of a meeting whose peer is gone, for `who` (the peer, the
/// port), saying `why` (pair_bounds::peer_gone).
inline peer_absent peer_gone_error(std::string_view who, std::string_view why) {
  return peer_absent(exit_code::connect_failed, std::string(who) + ": " + std::string(why));
}

/// A meeting's question whether its peer is gone (pair_bounds::peer_gone),
/// asked at most once a gone_check_interval, the first time one interval
/// after the meeting began (its caller had just asked).
class gone_check {
public:
  explicit gone_check(const pair_bounds& bounds) : bounds_(bounds) {}
  /// Throws peer_gone_error(who, why) when it is time to ask, and the peer is gone.
  void operator()(std::string_view who) {
    if (!bounds_.peer_gone || clock::now() < next_) return;
    next_ = clock::now() + gone_check_interval;
    if (auto why = bounds_.peer_gone()) throw peer_gone_error(who, *why);
  }
  /// When the meeting's wait should end to ask: `until`, or sooner.
  [[nodiscard]] deadline asking_by(const deadline& until) const {
    return bounds_.peer_gone ? until.min(deadline::at(next_)) : until;
  }

private:
  const pair_bounds& bounds_;
  clock::time_point next_ = clock::now() + gone_check_interval;
};

/// Meets a peer that listens, as dial_until_listening does, within the
/// meeting's bounds: `dial(meeting)` is handed the waits of the meeting
/// (its request's answer waits pair_bounds::answer), and the meeting's
/// deadline moves on while the peer is on its way
/// (pair_bounds::peer_on_its_way); a dial that the deadline cut short is
/// made again then. Between dials it asks whether the peer is gone
/// (pair_bounds::peer_gone), and ends then.
template <class Dial>
auto dial_to_meet(const pair_bounds& bounds, Dial&& dial) {
  gone_check gone(bounds);
  auto ask_if_gone = [&](const error& e) { gone(e.what()); };
  for (deadline until = bounds.meet;;) {
    try {
      return dial_until_listening(until, [&] { return dial(bounds.meeting_until(until)); }, not_listening_yet, ask_if_gone);
    } catch (const error& e) {
      bool cut_short = e.code() == exit_code::timeout && until.expired();
      if (!until.expired() || (!not_listening_yet(e) && !cut_short)) throw;
      auto later = bounds.later_meeting();
      // A step cut short says so: its own wait was not what ran out.
      if (!later && cut_short) throw peer_absent(e.code(), std::string(e.what()) + " (the time to meet the peer ran out)");
      if (!later) throw peer_absent(e.code(), e.what());  // it never listened
      until = *later;
    }
  }
}

}  // namespace fabric
