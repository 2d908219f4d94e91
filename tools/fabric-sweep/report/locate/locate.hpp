#pragma once
/// Locating the bad pairs on the fabric: each judged pair's route, both
/// ways, through the subnet's forwarding tables; the links scored by the
/// pairs that cross them; and the links that explain the bad pairs ranked
/// first, with those whose error counters rose between two fabric
/// documents, that went down, or that run below their ports' rate.
/// Pure functions over the model (discover/subnet.hpp), independent of
/// the report's matrix: the report hands over host names and verdicts.

#include "fabric-sweep/discover/subnet.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sweep::locate {

/// How to find one host of the sweep on the fabric: by the port GUID or
/// LID its sweep lines carry, else as the channel adapter whose node
/// description's first word is its name (rdma-ndd's "host mlx5_0") and,
/// for one of its rails, whose second word is the rail's device.
struct endpoint_hint {
  std::string host;
  std::optional<std::uint64_t> port_guid;
  std::optional<std::uint16_t> lid;
  std::string device;  ///< a rail's adapter; empty: the host's first linked one
};

/// A pair as the report judged it: indices into the endpoints.
struct judged_pair {
  std::uint32_t a = 0, b = 0;
  bool bad = false;  ///< slow or failed
};

/// One end of a suspect link.
struct suspect_end {
  std::uint64_t node_guid = 0;
  std::string description;
  std::uint8_t port = 0;
  subnet::node_type type = subnet::node_type::ca;
};

/// A link named as a suspect, worst first in location::suspects.
struct suspect {
  std::array<suspect_end, 2> ends;
  std::size_t pairs_crossing = 0, pairs_bad = 0;
  /// Error counters that rose between the two documents: name, increase.
  std::vector<std::pair<std::string, std::uint64_t>> counters;
  /// The active width and speed ("4X", "QDR"), and the best both ports
  /// support (and at least one enables); empty when unknown.
  std::string width, width_supported, speed, speed_supported;
  bool went_down = false;  ///< linked in the first document, not in the second
  double score = 0;        ///< the rank's key: bad pairs explained, weighted by the evidence
  std::string reason;      ///< one sentence
};

/// A pair no suspect explains (location::explained_by).
inline constexpr std::uint32_t no_suspect = UINT32_MAX;

/// What the locating found.
struct location {
  std::vector<suspect> suspects;
  /// For each pair handed over, in their order: the suspect (an index into
  /// `suspects`) named for it, the first on its route; no_suspect for a
  /// good pair, or a bad one no suspect explains.
  std::vector<std::uint32_t> explained_by;
  std::vector<std::string> notes;       ///< hosts not found, routes out of the tables, documents that differ
  std::size_t links = 0;                ///< the links of the first document
  std::size_t endpoints_found = 0;
  std::size_t pairs_routed = 0;         ///< pairs with both routes through the tables
  std::size_t pairs_unrouted = 0;       ///< pairs with an end not found or a route that left the tables
};

/// The most suspects listed; the rest are counted in a note.
inline constexpr std::size_t max_suspects = 50;

/// Locates the bad pairs of `pairs` on `before` (the fabric the sweep ran
/// on; routes are walked there); `after`, when given, is the same subnet
/// read after the sweep: counters are compared between the two, and links
/// that went down named. Without pairs it is a fabric check of its own.
location locate(const subnet::fabric& before, const subnet::fabric* after, const std::vector<endpoint_hint>& endpoints,
                const std::vector<judged_pair>& pairs);

/// "leaf03 port 6 - spine02 port 3": a suspect link by its two ends, each
/// by its node's description (printable_utf8) or, without one, its GUID.
std::string link_name(const suspect& s);

/// The best width and speed a link's two ports can run at: the widest
/// (fastest) both support, among those either enables; 0 when unknown.
std::uint8_t expected_width(const subnet::port& a, const subnet::port& b) noexcept;
std::uint8_t expected_speed(const subnet::port& a, const subnet::port& b) noexcept;

}  // namespace sweep::locate
