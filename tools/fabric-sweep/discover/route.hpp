#pragma once
/// A route through the subnet's linear forwarding tables, as ibtracert
/// walks it: out of the source port, then at each switch the port its
/// table gives for the destination LID, until the port that owns the LID.
/// A pure function over the model: no MAD is sent.

#include "subnet.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace sweep::subnet {

/// How a walk ended.
enum class route_end : std::uint8_t {
  arrived,   ///< at the port that owns the destination LID
  no_source, ///< the source port is not in the model, or not linked
  hole,      ///< a switch's table has no port for the LID (or is shorter)
  loop,      ///< the walk came back to a switch it had passed
  dead_end,  ///< the table's port is not linked, or leads to a CA that is not the destination
};

/// A route: the links it crosses, in order, and how it ended.
struct route {
  std::vector<std::uint32_t> links;  ///< indices into index::links()
  route_end ended = route_end::arrived;
  std::string reason;                ///< why it did not arrive; empty when it did
  [[nodiscard]] bool arrived() const noexcept { return ended == route_end::arrived; }
};

/// The longest route walked: LID routing has no hop limit of its own, but
/// a route that long has passed a switch twice.
inline constexpr std::size_t max_hops = 64;

/// The route from port `from` (a CA's port, or a switch) to LID `dlid`.
/// `links` is reused (cleared first): the report walks millions of routes.
void walk_route(const index& at, end from, std::uint16_t dlid, route& out);
route walk_route(const index& at, end from, std::uint16_t dlid);

}  // namespace sweep::subnet
