#pragma once
/// The connection table: each connection's state as it is set up, used and
/// torn down, its QP, when its steps started, and its entry in the report
/// (outcome, counts, step times). Owns the QPs; the rdma_cm ids are the
/// session's, the verbs resources the device pool's.

#include "report.hpp"

#include "fabric/cli/console.hpp"
#include "fabric/base/handles.hpp"
#include "fabric/cm/rc.hpp"
#include "fabric/base/wait.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ucmatose {

struct device_resources;

/// Where a connection is.
enum class conn_state { resolving_addr, resolving_route, connecting, established, failed };

/// One connection's bookkeeping beside its report entry.
struct connection {
  rdma_cm_id* id = nullptr;                 ///< owned by the session
  device_resources* dev = nullptr;          ///< the device its QP is on, once it has one
  fabric::verbs_qp qp;                      ///< not on the id: its number goes in the CM's parameters
  fabric::rc_init qp_init = fabric::rc_init::again;  ///< how ready_rc_qp takes it to RTS
  conn_state st = conn_state::resolving_addr;
  std::array<fabric::clock::time_point, step_count> started{};
  fabric::deadline resolving = fabric::deadline::at({});  ///< the end of its address's or route's wait
  std::uint64_t send_done = 0, recv_done = 0;  ///< completions of any status
  bool disconnect_started = false;          ///< we called rdma_disconnect
  bool disconnected = false;                ///< DISCONNECTED arrived
};

/// Every connection of a run, indexed from 0 as in the report.
class connection_table {
public:
  /// `timed`: step times are taken (see options::timed).
  connection_table(report& r, fabric::console& con, bool timed);

  /// Adds a connection on `id` and tags the id with its index.
  std::size_t add(rdma_cm_id* id, std::string peer, conn_state st);
  /// The index an id was tagged with; none for an id of no connection
  /// (the listener, a refused request).
  static std::optional<std::size_t> index_of(const rdma_cm_id* id) noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return conns_.size(); }
  [[nodiscard]] bool empty() const noexcept { return conns_.empty(); }
  connection& operator[](std::size_t i) { return conns_[i]; }
  const connection& operator[](std::size_t i) const { return conns_[i]; }
  connection_result& result(std::size_t i) { return r_.connections[i]; }
  void reserve(std::size_t n);

  /// Now, when steps are timed; a zero time point otherwise, so that an
  /// untimed run never reads the clock (under emulation a clock read can
  /// be a system call and an emulated device access). Steps that meet
  /// share a time stamp.
  [[nodiscard]] fabric::clock::time_point stamp() const;
  [[nodiscard]] bool timed() const noexcept { return timed_; }
  void start(std::size_t i, step s) { start(i, s, stamp()); }
  void start(std::size_t i, step s, fabric::clock::time_point at);
  void finish(std::size_t i, step s) { finish(i, s, stamp()); }
  void finish(std::size_t i, step s, fabric::clock::time_point at);
  /// Records a step timed elsewhere (a QP made ahead, the destroy loop).
  void record(std::size_t i, step s, double us);

  /// Connection i is established at `at`: counted, and said (connected event).
  void establish(std::size_t i, fabric::clock::time_point at);
  /// Connection i failed (or, if established, ended with an error): the
  /// first reason stands, and the run's first failure is kept.
  void fail(std::size_t i, const std::string& why, fabric::exit_code code);
  /// A failure of the run that is no connection's.
  void fail_run(const std::string& why, fabric::exit_code code);
  /// The run's first failure, for a run where no connection was established.
  [[nodiscard]] std::optional<fabric::error> first_failure() const;

  /// Connections still being set up.
  [[nodiscard]] std::size_t pending() const noexcept { return pending_; }
  void set_pending(std::size_t n) noexcept { pending_ = n; }
  /// Whether a connection failed to set up.
  [[nodiscard]] bool setup_failed() const;

  /// The setup window: from `at` to the last connection established.
  void begin_setup(fabric::clock::time_point at) noexcept { setup_start_ = at; }
  /// Puts the setup window into the report, when it was timed.
  void end_setup();

private:
  report& r_;
  fabric::console& con_;
  bool timed_;
  std::vector<connection> conns_;
  std::size_t pending_ = 0;
  std::optional<fabric::exit_code> first_failure_;
  std::string first_failure_what_;
  fabric::clock::time_point setup_start_{}, last_established_{};
};

}  // namespace ucmatose
