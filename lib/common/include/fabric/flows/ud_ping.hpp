#pragma once
/// A UD ping-pong between two hosts over an rdma_cm SIDR exchange, for
/// checks that need datagram round trips and loss and nothing of a tool's
/// own protocol (the fleet sweep's ud check): the client sends one
/// datagram of `size` bytes at a time, numbered, and waits up to
/// `reply_timeout` for the server to send it back; one that does not come
/// back in time is lost, never waited for again.

#include "fabric/base/meet.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/base/wait.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace fabric {

/// What to ping and how.
struct datagram_plan {
  std::string addr;            ///< server address (client), or the address to listen on (server; empty: any)
  std::uint16_t port = 0;      ///< in the UDP port space
  std::uint32_t size = 64;     ///< bytes per datagram, at least 8 (its number), at most the path MTU
  std::uint64_t count = 100;   ///< datagrams
  std::chrono::milliseconds reply_timeout{250};  ///< the client's wait for each reply
  std::string source;            ///< client: the local address to leave from (empty: the route's)
};

/// What one side saw.
struct datagram_outcome {
  latency_stats rtt;           ///< client: round trips of the datagrams that came back (microseconds)
  double connect_us = 0;       ///< client: from the first attempt to ESTABLISHED; server: request to accept
  std::uint64_t sent = 0;      ///< datagrams sent (client) or sent back (server)
  std::uint64_t received = 0;  ///< replies that came back in time (client), datagrams echoed (server)
  std::uint64_t strangers = 0; ///< datagrams from anyone but the peer, ignored
  std::uint64_t oversize = 0;  ///< datagrams longer than plan.size, from anyone, dropped
  std::string peer;            ///< "10.0.0.2:18515"
};

/// The server half: listens on plan.port (UDP port space), accepts one
/// client and sends back each of its datagrams, until its last one
/// (plan.count - 1) came, or none came for 4 x plan.reply_timeout after
/// the first, or bounds.work after the client came. Throws error(timeout)
/// when no client came by bounds.meet, error(no_device) when plan.size
/// does not fit the path MTU. Fills `out` as it goes: what was done stands
/// when it throws.
void serve_datagrams(const datagram_plan& plan, const pair_bounds& bounds, datagram_outcome& out);

/// The client half: resolves, connects (again and again while nothing
/// listens yet, until bounds.meet), and sends plan.count datagrams one at
/// a time within bounds.work. Loss is counted (sent - received), not
/// thrown; a late reply to an earlier datagram is ignored. Fills `out` as
/// serve_datagrams does.
void send_datagrams(const datagram_plan& plan, const pair_bounds& bounds, datagram_outcome& out);

}  // namespace fabric
