#pragma once
/// Where a rank is in its rounds, for a peer that waits for it. Rounds are
/// not in lockstep, so a live peer may come late to a pair, held up by a
/// dead host of its own in an earlier round; a wait long enough for every
/// such delay would be too long for a dead peer. So a rank tells any peer
/// that asks which round it is at (one line over TCP, on port --port + 1 +
/// its rank of its address), and a pair whose meeting's deadline passed
/// waits on while its peer is at an earlier round and moving, and gives up
/// when the peer is past their pair, stuck, silent (frozen, its host gone)
/// or not there at all. The same port tells a peer whose process ended
/// (departures): it listened once and refuses now.

#include "options.hpp"

#include "fabric/base/socket.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sweep {

/// How many pair timeouts late a peer may come to a pair without word of
/// it (a dead host of its own in each of that many earlier rounds).
inline constexpr int max_late_rounds = 3;

/// The TCP port on which `rank` answers where it is; nullopt past 65535.
std::optional<std::uint16_t> presence_port(int base, int rank);

/// A rank's answer ("fabric-sweep RANK STEP"), and the reader that takes
/// a peer's bytes for untrusted: the step, or nullopt for anything but
/// the answer of `rank`.
std::string presence_line(int rank, long step);
std::optional<long> read_presence(std::string_view line, int rank);

/// This rank's answerer: a thread that answers every connection on its
/// port with the step it is at, until it goes. A port it cannot listen on
/// leaves it silent (its peers then wait as they would without it).
class presence {
public:
  presence(const run_options& r, int rank);
  ~presence();
  presence(const presence&) = delete;
  presence& operator=(const presence&) = delete;

  /// This rank has started the round of `step` (rounds of earlier sweeps
  /// and re-test rounds counted: it only grows).
  void at(long step) noexcept { step_.store(step, std::memory_order_relaxed); }

private:
  void answer();

  int rank_;
  std::atomic<long> step_{0};
  fabric::unique_fd listener_;
  fabric::unique_fd wake_;  // an eventfd: written to stop the thread
  std::thread thread_;
};

/// Which peers have left the sweep, for a rank about to meet one. A peer
/// whose presence port took a connection once (a thread of this rank's
/// dials each peer once, soon after the start) and refuses one now has no
/// process there any more: it was killed, or it ended its rounds. Its
/// pair then fails at once instead of waiting out the meeting for it. A
/// refusal from a port never seen listening says nothing (a firewall that
/// rejects looks the same), nor does silence (a frozen process's kernel
/// still takes the connection; a host that is gone answers nothing).
class departures {
public:
  /// Starts dialling `peers` (ranks; `addrs` has every rank's address).
  departures(const run_options& r, const std::vector<std::string>& addrs, int rank, std::vector<int> peers);
  ~departures();
  departures(const departures&) = delete;
  departures& operator=(const departures&) = delete;

  /// Whether `peer` left: its port listened when first dialled, and
  /// refuses now. Dials it, waiting at most a second.
  [[nodiscard]] bool left(int peer) const;
  /// Whether the first dial of `peer` found its port listening (false
  /// before that dial).
  [[nodiscard]] bool seen_listening(int peer) const;

private:
  void first_dials(const std::stop_token& stop, const std::vector<int>& peers);

  int base_port_;
  std::vector<std::string> addrs_;
  std::unique_ptr<std::atomic<bool>[]> listened_;  ///< by rank
  std::jthread thread_;  // last: stopped and joined first
};

/// The hook of a pair's meeting (pair_bounds::peer_on_its_way) that asks
/// the peer `rank` at `addr` where it is: on its way while it answers a
/// step before `step`, or `step` itself, and its answers move on; not
/// after it answered the same `max_stalls` times in a row (a peer waits
/// out a dead host in a bounded time), nor once it is past `step`, is
/// silent or does not listen. Each question waits at most `each`.
std::function<bool()> peer_on_its_way(const run_options& r, const std::string& addr, int rank, long step);

}  // namespace sweep
