#pragma once
/// rping: RC connection, RDMA READ and RDMA WRITE check, wire-compatible
/// with rdma-core's rping, with latency statistics and bounded waits.

#include "fabric/cli/cli.hpp"
#include "fabric/base/stats.hpp"
#include "fabric/base/wait_limit.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace rping {

/// Command-line options (the original's short flags, uniform long names).
struct options {
  bool server = false;          ///< -s
  bool client = false;          ///< -c
  std::string addr;             ///< -a
  std::string source;           ///< -I
  std::uint16_t port = 7174;    ///< -p
  std::uint64_t count = 0;      ///< -C, 0 = forever
  std::uint32_t size = 64;      ///< -S
  int verbose = 0;              ///< -v
  bool verify = false;          ///< -V
  int debug = 0;                ///< -d
  bool persistent = false;      ///< -P
  bool self_created_qp = false; ///< -q
  bool stats = false;           ///< --stats
  int interval_ms = 0;          ///< --interval
  bool busy_poll = false;       ///< --busy-poll
  fabric::wait_limit timeout{std::chrono::milliseconds(10000)};  ///< --timeout
  int retry_ms = 0;             ///< --retry
  fabric::cli::output_options out;
};

/// --retry without a value: how long a client keeps trying.
inline constexpr int default_retry_ms = 10000;

/// Declares every option on `app`.
void add_options(CLI::App& app, options& opt);

/// Checks the options as a whole; throws a usage error.
void validate(const options& opt);

/// The options object of the JSON document.
nlohmann::json options_json(const options& o);

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
  /// Connections that ended, in the order they ended.
  std::vector<connection_result> connections;
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
