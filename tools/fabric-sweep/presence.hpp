#pragma once
/// Where a rank is in its rounds, for a peer that waits for it. Rounds are
/// not in lockstep, so a live peer may come late to a pair, held up by a
/// dead host of its own in an earlier round; a wait long enough for every
/// such delay would be too long for a dead peer. So a rank tells any peer
/// that asks which round it is at (one line over TCP, on port --port + 1 +
/// its rank of its address), and a pair whose meeting's deadline passed
/// waits on while its peer is at an earlier round and moving, and gives up
/// when the peer is past their pair, stuck, silent (frozen, its host gone)
/// or not there at all.

#include "options.hpp"

#include "fabric/base/socket.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

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

/// The hook of a pair's meeting (pair_bounds::peer_on_its_way) that asks
/// the peer `rank` at `addr` where it is: on its way while it answers a
/// step before `step`, or `step` itself, and its answers move on; not
/// after it answered the same `max_stalls` times in a row (a peer waits
/// out a dead host in a bounded time), nor once it is past `step`, is
/// silent or does not listen. Each question waits at most `each`.
std::function<bool()> peer_on_its_way(const run_options& r, const std::string& addr, int rank, long step);

}  // namespace sweep
