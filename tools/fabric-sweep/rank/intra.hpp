#pragma once
/// One host's ping-pongs between its own addresses, both sides on the host
/// (the sweep's intra pairs, health's self-connection and rail pairs), and
/// running many things at once, a thread each (a round's rails, a host's
/// rail pairs).

#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"
#include "fabric-sweep/rank/place.hpp"
#include "fabric-sweep/rank/rails.hpp"
#include "fabric-sweep/rank/rounds.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace sweep {

/// A ping-pong of a host with itself: from one of its addresses to another
/// (or the same).
struct self_ping {
  std::string from;          ///< the client's address (empty: the route's)
  std::string to;            ///< where the server listens, and the client dials
  int port = 0;
  std::uint32_t size = 64;   ///< bytes a ping
  std::uint64_t count = 100; ///< pings
  std::vector<std::byte> key;  ///< the pair's key (fabric::pair_bounds::key); empty: none
  /// The CPUs each side's thread keeps to (its rail's NUMA node); empty: any.
  std::vector<unsigned> from_cpus, to_cpus;
};

/// Pings `plan.to` from `plan.from`: a server thread listens, the calling
/// thread (kept to plan.from_cpus) connects, each wait bounded by
/// --timeout, the work by --pair-timeout. The result is the client's, on
/// `host` both sides; a server that failed on its own (it could not listen
/// there) fails it, "serving: ...". Throws only what ends the run.
pair_result ping_self(const run_options& r, const std::string& host, const self_ping& plan);

/// The intra round of a sweep on rails (--check intra, --intra), the
/// round `round` of its lines, its ports those of step `step`: every two
/// of this host's agreed rails (intra_meetings), the client leaving from
/// the first for the second's address, all at once, a thread each on its
/// rail's NUMA node; the ping check's flow, -C and -S (--check intra) or
/// its defaults (beside another check). A pair with a rail this host
/// cannot use fails untried, saying why.
std::vector<pair_result> intra_round(const options& opt, const place& where, const rails_here& rails,
                                     const port_plan& ports, int round, int step);

/// Runs `job(i)` for every i below `n`, each on a thread of its own (every
/// signal blocked there: Ctrl-C reaches the caller's waits and theirs
/// through the run's interrupt), all at once, and waits for all of them:
/// what each threw, by i (nullptr for none).
std::vector<std::exception_ptr> all_at_once(std::size_t n, const std::function<void(std::size_t)>& job);

}  // namespace sweep
