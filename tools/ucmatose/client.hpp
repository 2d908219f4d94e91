#pragma once
/// The client's flow: -c ids made, their addresses and routes resolved and
/// all of them connected at once, the server's messages received and as
/// many sent back, then the server's disconnect answered. Owns the
/// resolved addresses; everything else is the session's.

#include "session.hpp"

#include "fabric/verbs/addr.hpp"

#include <string>

namespace ucmatose {

/// The side given -s.
class client final : public session {
public:
  using session::session;
  void run() override;

private:
  bool on_connect_request(fabric::cm_event& ev) override;
  void on_flow_event(fabric::cm_event& ev, std::size_t i) override;
  void on_addr_resolved(std::size_t i);
  void on_route_resolved(std::size_t i);
  void on_connect_response(std::size_t i);
  /// One try (of `ms`) of connection i's address or route resolution.
  void try_addr(std::size_t i, int ms);
  void try_route(std::size_t i, int ms);

  fabric::resolved_pair addrs_;
  std::string resolve_addr_what_;  // what a failed address resolution says, made once: every connection asks the same
};

}  // namespace ucmatose
