#pragma once
/// RC connection setup between two hosts, timed, for checks of how fast a
/// pair of hosts makes connections and nothing of a tool's own protocol
/// (the fleet sweep's connect check): the client makes `count` connections
/// one after another, each resolved, connected, disconnected and torn down
/// before the next; the server accepts each. The first connection is the
/// meeting, the rest the work after it (pair_bounds).

#include "fabric/base/meet.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/base/wait.hpp"

#include <cstdint>
#include <string>

namespace fabric {

/// What to connect to and how often.
struct connect_plan {
  std::string addr;            ///< server address (client), or the address to listen on (server; empty: any)
  std::uint16_t port = 0;
  std::uint64_t count = 10;    ///< connections
  std::string source;            ///< client: the local address to leave from (empty: the route's)
};

/// What one side saw.
struct connect_outcome {
  latency_stats setup;         ///< client: each connection from its id's creation to ESTABLISHED (microseconds)
  std::uint64_t connected = 0; ///< connections that reached ESTABLISHED
  double elapsed_us = 0;       ///< from the first connection's start to the last one's teardown
  std::string peer;            ///< "10.0.0.2:18515"
};

/// The server half: listens on plan.port and accepts plan.count
/// connections, each until its client disconnects. Throws error(timeout)
/// when the first did not come by bounds.meet, or the rest did not all
/// come and go within bounds.work of the first. Fills `out` as it goes:
/// what was done stands when it throws.
void accept_connections(const connect_plan& plan, const pair_bounds& bounds, connect_outcome& out);

/// The client half: makes plan.count connections in turn. The first one is
/// tried again and again while nothing listens yet (the server may start a
/// little later), until bounds.meet. A rejection or an unreachable peer
/// after that throws error(connect_failed), a silent one error(timeout).
/// Fills `out` as accept_connections does.
void make_connections(const connect_plan& plan, const pair_bounds& bounds, connect_outcome& out);

}  // namespace fabric
