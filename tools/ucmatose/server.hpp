#pragma once
/// The server's flow: a listener, -c connection requests accepted (more
/// are refused) on QPs made ahead where the device is known, the messages
/// sent and as many received, then the disconnect. Owns whether requests
/// are still taken; everything else is the session's.

#include "session.hpp"

namespace ucmatose {

/// The side without -s.
class server final : public session {
public:
  using session::session;
  void run() override;

private:
  bool on_connect_request(fabric::cm_event& ev) override;
  void on_flow_event(fabric::cm_event& ev, std::size_t i) override;
  /// Waits for the first client without limit, then for the others as
  /// long as they come in time; a shortage is said, the rest are served.
  void connect_phase();

  bool accepting_ = true;                 // the connect phase is on: requests up to -c are taken
};

}  // namespace ucmatose
