#pragma once
/// Where a rank is in its rounds, for a peer that waits for it. Rounds are
/// not in lockstep, so a live peer may come late to a pair, held up by a
/// dead host of its own in an earlier round; a wait long enough for every
/// such delay would be too long for a dead peer. So a rank tells any peer
/// that asks which round it is at (one line over TCP, on port --port + 1 +
/// its rank of its address), and a pair whose meeting's deadline passed
/// waits on while its peer is at an earlier round and moving, and gives up
/// when the peer is past their pair, stuck, silent (frozen, its host gone)
/// or not there at all. The same port tells which peers are gone
/// (departures): one whose process ended answered once and refuses now,
/// one stopped or whose host is gone answered once and is silent now.

#include "fabric-sweep/options.hpp"

#include "fabric/base/socket.hpp"
#include "fabric/base/wait.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
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
  /// and re-test rounds counted: it only grows), or (`step` + 1) is done
  /// with its pair of that round.
  void at(long step) noexcept { step_.store(step, std::memory_order_relaxed); }

private:
  void answer();

  int rank_;
  std::atomic<long> step_{0};
  fabric::unique_fd listener_;
  fabric::unique_fd wake_;  // an eventfd: written to stop the thread
  std::thread thread_;
};

/// Which peers are gone from the sweep, for a rank about to meet one,
/// meeting one, or (rank 0) waiting for the ranks' word after the rounds.
/// A thread of this rank's asks each peer where it is once, soon after
/// the start; a peer that answered then as itself and now refuses the
/// connection has no process there any more (it was killed, or it ended
/// its rounds), and one that has answered nothing since for
/// silence_limit() (its process stopped, its host gone: a stopped process's
/// kernel still takes the connection, a gone host answers nothing) will
/// not come either. Its pair then fails at once, or within that time,
/// instead of waiting out the meeting for it: in a fleet, each round's
/// wait for such a peer holds up the rounds after it. A peer that did not
/// answer at the start says nothing by a refusal or silence later (a
/// firewall, another program on its port).
class departures {
public:
  /// How long a peer that answered at the start must be silent (at two
  /// questions at least) to be gone: half a --timeout, three seconds at
  /// least. A live rank's answerer replies at once, even with the rank at
  /// a pair's work.
  static constexpr std::chrono::milliseconds min_silence{3000};

  /// Starts asking `peers` (ranks; `addrs` has every rank's address).
  departures(const run_options& r, const std::vector<std::string>& addrs, int rank, std::vector<int> peers);
  ~departures();
  departures(const departures&) = delete;
  departures& operator=(const departures&) = delete;

  /// Why `peer` will not come ("left the sweep (...)", "stopped answering
  /// (...)"; for the pair of `step`, "moved on past this pair (...)" once
  /// it answers a later step: its side of the pair ended on its own), or
  /// nullopt while nothing sure is known. Asks it once, waiting at most a
  /// second; silent questions at most three seconds apart make one
  /// silence. Threads may ask at once (a pair's rails): one question to a
  /// peer at a time, whose answer stands for those that waited for it.
  [[nodiscard]] std::optional<std::string> why_gone(int peer, std::optional<long> step = std::nullopt);
  /// The peers of `missing` that are gone, with why, for a wait on many at
  /// once (rank 0's gathering after the rounds): asks each once, in turn,
  /// until `until`; a caller asks again once a pass is over, and a peer's
  /// silent questions of passes in a row make one silence, however long a
  /// pass over many silent peers takes.
  [[nodiscard]] std::vector<std::pair<int, std::string>> gone_of(const std::vector<int>& missing,
                                                                 const fabric::deadline& until);
  /// Whether the first question to `peer` had its answer (false before
  /// that question).
  [[nodiscard]] bool seen_answering(int peer) const;
  [[nodiscard]] std::chrono::milliseconds silence_limit() const { return silence_limit_; }

private:
  /// why_gone, where silent questions at most `gap` apart make one silence.
  std::optional<std::string> why_gone(int peer, std::chrono::milliseconds gap, std::optional<long> step);
  void first_questions(const std::stop_token& stop, const std::vector<int>& peers);

  int base_port_;
  std::chrono::milliseconds silence_limit_;
  std::vector<std::string> addrs_;
  std::unique_ptr<std::atomic<bool>[]> answered_;  ///< by rank, at the first question
  struct watch;                                    ///< a peer's last answer and silence, under its lock
  std::unique_ptr<watch[]> watched_;               ///< by rank
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
