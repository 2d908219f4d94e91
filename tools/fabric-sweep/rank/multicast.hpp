#pragma once
/// The multicast check, which has no pairs of its own: every host in one
/// group at once (mckey's flow).

#include "fabric-sweep/rank/meetings.hpp"
#include "fabric-sweep/options.hpp"
#include "fabric-sweep/rank/pair.hpp"
#include "fabric-sweep/rank/place.hpp"

#include <string>
#include <vector>

namespace sweep {

/// The multicast check of one sweep (multicast.cpp): this rank joins
/// --group, meets every rank at rank 0 (gather_everyone), sends its
/// datagrams and counts everyone's; one result per peer, in rank order.
/// `met` is what the meeting said.
std::vector<pair_result> run_group(const options& opt, const place& where, const std::vector<std::string>& addrs,
                                   int sweep, agreement& met);

}  // namespace sweep
