#pragma once
/// rping: RC connection, RDMA READ and RDMA WRITE check, wire-compatible
/// with rdma-core's rping, with latency statistics and bounded waits.

#include "options.hpp"

#include "fabric/cli/cli.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/base/wait_limit.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace rping {

/// One connection: the client's, or one a server served.
struct connection_result {
  std::size_t index = 0;
  std::string peer;
  std::uint64_t pings = 0;
  std::uint64_t verify_errors = 0;
  fabric::latency_stats rtt;           ///< per ping, microseconds, in fixed memory
  std::string error;                   ///< empty when it ended cleanly
};

/// What a run produced; rendered by to_json and the human printer.
struct report {
  std::string role = "none";
  /// Connections that ended, in the order they ended, each in the results.
  std::vector<connection_result> connections;
  /// The totals of a persistent server's connections that ended and are
  /// not kept (without -j: their result events or --stats lines told of
  /// each), so that an endless run keeps constant memory.
  struct folded_totals {
    std::size_t connections = 0;
    std::uint64_t pings = 0;
    std::uint64_t verify_errors = 0;
    std::size_t failed = 0;
    fabric::latency_stats rtt;
  } folded;

  /// Takes a connection that ended into the totals alone.
  void fold(const connection_result& c);
  /// Connections that ended, kept or folded.
  [[nodiscard]] std::size_t ended() const { return connections.size() + folded.connections; }
  [[nodiscard]] std::uint64_t total_pings() const;
  [[nodiscard]] std::uint64_t total_verify_errors() const;
  [[nodiscard]] std::size_t failed() const;
};

/// A connection as an item of the document's results (and of a result event).
nlohmann::json result_json(const connection_result& c);

/// The document's role, options, results and summary.
void to_json(nlohmann::json& j, const options& o, const report& r);

/// The --stats line of a connection: its pings, verify errors and rtt.
std::string format_stats(const connection_result& c);

/// The line that closes a persistent server's run: the connections it
/// served, their pings, verify errors and failures.
std::string served_line(const report& r);

/// Runs the client or server; fills `r` as it goes.
fabric::verdict run(const options& opt, report& r, fabric::console& con);

}  // namespace rping
