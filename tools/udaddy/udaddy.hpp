#pragma once
/// udaddy: unreliable datagrams between a client and a server that meet
/// through rdma_cm SIDR, wire-compatible with rdma-core's udaddy.

#include "options.hpp"

#include "fabric/cli/cli.hpp"
#include "fabric/cli/ud_report.hpp"
#include "fabric/base/wait_limit.hpp"

#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace udaddy {

/// One connection; state: pending, connected, failed. setup_us is the
/// connection time.
struct connection_result : fabric::ud_result {
  std::string peer;             ///< the other side's address and port; empty until known
  std::uint64_t strangers = 0;  ///< datagrams from other senders, ignored
};

/// What a run produced; rendered by to_json and the human lines.
struct report {
  std::string role = "none";       ///< client, server
  std::optional<std::uint32_t> mtu;
  std::uint32_t size = 0;          ///< -S: bytes of each message
  std::vector<connection_result> results;
  std::optional<double> elapsed_us;  ///< the data phase

  [[nodiscard]] fabric::ud_totals totals() const {
    auto t = fabric::totals(results, "connected");
    t.size = size;
    return t;
  }
};

/// A connection as an item of results (and of a result event).
nlohmann::json result_json(const connection_result& c);

/// The document's role, options, results and summary.
void to_json(nlohmann::json& j, const options& opt, const report& r);

/// Lines naming each connection that lost messages; empty when none did.
std::vector<std::string> loss_lines(const report& r);
/// The --stats summary lines.
std::vector<std::string> stats_lines(const report& r, int expected_connections);
/// The verdict of a finished data phase: ok, or test_failed with the reason.
fabric::verdict judge(const report& r, int expected_connections);

/// Runs the client or the server; fills `rep` as it goes.
fabric::verdict run(const options& opt, report& rep, fabric::console& con);

}  // namespace udaddy
