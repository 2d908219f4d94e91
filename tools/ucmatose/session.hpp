#pragma once
/// What the client and server flows share: the rdma_cm ids and their event
/// channel, the device pool, the connection table and the message exchange,
/// held in teardown order; the loop that drives them, each phase bounded
/// by --timeout without progress; the CM events every connection gets
/// (ESTABLISHED, the failures, DISCONNECTED); and the phases after the
/// flow's own setup: data, disconnect, destroy. The flows (client.hpp,
/// server.hpp) add their own events and the order of their phases.

#include "connections.hpp"
#include "devices.hpp"
#include "exchange.hpp"
#include "options.hpp"
#include "report.hpp"

#include "fabric/cm/cm.hpp"
#include "fabric/cli/console.hpp"
#include "fabric/base/error.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ucmatose {

/// One run of either side.
class session {
public:
  session(const options& o, report& r, fabric::console& con);
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  virtual ~session() = default;

  /// Runs the flow to its end. A connection's failure goes into the report;
  /// what ends the run (no device, interrupted, ...) is thrown.
  virtual void run() = 0;

  /// The verdict of a flow that ran to its end.
  [[nodiscard]] fabric::verdict verdict() const;

protected:
  /// A connection request (server). Returns whether it was progress.
  virtual bool on_connect_request(fabric::cm_event& ev) = 0;
  /// An event of connection i that only the flow handles (the client's
  /// address and route resolution, the server's answer); may throw to
  /// fail connection i.
  virtual void on_flow_event(fabric::cm_event& ev, std::size_t i) = 0;

  fabric::cm_channel& events() { return migrated_ ? *migrated_ : channel_; }

  /// Handles one CM event; returns whether it was progress (an event of
  /// one of the run's connections, or a connection request taken).
  bool handle(fabric::cm_event& ev);
  /// Handles CM events and completions until `done` holds; false when the
  /// phase went --timeout without progress first.
  bool drive(const std::function<bool()>& done);

  /// Connection i's QP from the device pool, its making recorded as the
  /// connection's create_qp step.
  void take_qp(std::size_t i);
  /// Connection i is established: its connect step ends.
  void on_established(std::size_t i);

  /// Drives the connections being set up until none is pending; on timeout
  /// fails the ones still on their way, naming the event they wait for.
  /// Returns whether all of them got to an end in time.
  bool connect_phase(const std::function<bool()>& done);
  /// After connecting: puts the setup window into the report and, when a
  /// connection failed to set up, ends the test as the original does: the
  /// established connections are only disconnected, and everything is
  /// destroyed. Returns whether the test goes on.
  bool after_setup();
  /// Waits for every established connection to finish `what` (counted by
  /// `done_count`); marks the stragglers with an error on timeout.
  void complete_phase(std::uint64_t connection::*done_count, std::string_view what);
  /// Posts every established connection's sends.
  void post_all_sends();
  /// -m: every id moves to a new event channel.
  void migrate();
  /// Disconnects: `initiate` as the server does; otherwise waits for the
  /// peer first and disconnects on its own only after --timeout.
  void disconnect_phase(bool initiate);
  /// QPs first, then the shared resources, then the ids (the man pages'
  /// order), each connection's share timed as its destroy step.
  void destroy();

  const options& o_;
  report& r_;
  fabric::console& con_;
  std::uint32_t count_;                            // messages each way per connection
  std::string shortage_;                           // a server short of clients says so here

  // Teardown runs bottom-up: QPs, the devices' resources, ids, channels.
  fabric::cm_channel channel_;                     // destroyed after every id
  std::unique_ptr<fabric::cm_channel> migrated_;   // -m: where the ids go before disconnecting
  fabric::cm_id listener_;
  std::vector<fabric::cm_id> ids_;                 // connection i's id at i
  std::vector<fabric::cm_id> refused_;             // requests refused; go once their events are acknowledged
  device_pool devices_;
  connection_table table_;                         // holds the QPs
  message_exchange exchange_;

private:
  void on_disconnected(std::size_t i);
  void start_disconnects();
};

/// Sets an id's options as the original does: -t on a client's ids, -a on
/// every id; an option the id refuses is said on stderr and the test goes on.
void set_id_options(const options& o, fabric::console& con, rdma_cm_id* id, bool client);

}  // namespace ucmatose
