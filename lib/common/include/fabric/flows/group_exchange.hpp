#pragma once
/// A multicast group joined by several hosts, each sending numbered
/// datagrams to all the others, for checks that need to know who hears
/// whom and nothing of a tool's own protocol (the fleet sweep's multicast
/// check). A member joins first; once every member has joined (the caller
/// agrees on that out of band), each exchanges. Every wait bounded.

#include "fabric/cm/cm.hpp"
#include "fabric/cm/multicast.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/base/wait.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fabric {

/// Which group and who is in it.
struct group_plan {
  std::string group;             ///< the multicast address
  std::string local;             ///< this member's own address (the port that joins)
  std::uint32_t member = 0;      ///< this member's number, carried in each datagram
  std::uint32_t members = 0;     ///< numbers 0 .. members - 1 may send
  std::uint32_t size = 64;       ///< bytes per datagram, at least 16 (sender and number)
  std::uint64_t count = 100;     ///< datagrams each member sends
  std::chrono::milliseconds quiet{1000};  ///< after this member's sends, the longest silence before it stops listening
};

/// What one member heard.
struct group_outcome {
  std::vector<std::uint64_t> received;  ///< distinct datagrams from each member (its own: 0)
  std::uint64_t sent = 0;
  std::uint64_t strangers = 0;          ///< datagrams that were not a member's
  std::uint64_t oversize = 0;           ///< datagrams longer than plan.size, from anyone, dropped
  double join_us = 0;                   ///< from the join to MULTICAST_JOIN
};

/// One member of the group: joined when constructed, out of the group
/// when destroyed.
class group_member {
public:
  /// Joins (resolving the group from plan.local). Throws error(timeout)
  /// when a wait of the join outlasts `limit`, error(no_device) when
  /// plan.size does not fit the port.
  group_member(const group_plan& plan, const wait_limit& limit);
  ~group_member();
  group_member(const group_member&) = delete;
  group_member& operator=(const group_member&) = delete;

  [[nodiscard]] double join_us() const noexcept;

  /// Sends plan.count datagrams to the group and counts what comes from
  /// every other member, until each sent plan.count, or nothing came for
  /// plan.quiet after this member's sends, or `limit` ended a wait.
  group_outcome exchange(const wait_limit& limit);

private:
  struct state;
  std::unique_ptr<state> s_;
};

}  // namespace fabric
