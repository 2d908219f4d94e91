#pragma once
/// An RC ping-pong between two hosts, for checks that need a round-trip
/// time and nothing of a tool's own protocol (the fleet sweep): the client
/// sends `size` bytes, the server sends them back, `count` times; the
/// meeting and the pings after it each bounded (pair_bounds).

#include "fabric/base/meet.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/base/wait.hpp"

#include <cstdint>
#include <string>

namespace fabric {

/// What one side saw.
struct ping_outcome {
  latency_stats rtt;           ///< round trips, client side (microseconds)
  double connect_us = 0;       ///< from the first attempt to ESTABLISHED
  std::uint64_t exchanged = 0; ///< pings completed
  std::string peer;            ///< "10.0.0.2:18515"
};

/// What to ping and how.
struct ping_plan {
  std::string addr;            ///< server address (client), or the address to listen on (server; empty: any)
  std::uint16_t port = 0;
  std::uint32_t size = 64;     ///< bytes per ping, at least 1
  std::uint64_t count = 100;   ///< pings
  std::string source;          ///< client: the local address to leave from (empty: the route's)
};

/// The server half: listens on plan.port, accepts one client, echoes
/// plan.count pings. Throws error(timeout) when no client came by
/// bounds.meet or the pings stopped before bounds.work ran out,
/// error(connect_failed) when it went away. Fills `out` as it goes: what
/// was done stands when it throws.
void serve_pings(const ping_plan& plan, const pair_bounds& bounds, ping_outcome& out);

/// The client half: connects (again and again while nothing listens yet,
/// until bounds.meet: the server may start a little later) and times
/// plan.count pings; fills `out` as serve_pings does.
void send_pings(const ping_plan& plan, const pair_bounds& bounds, ping_outcome& out);

}  // namespace fabric
