#pragma once
/// rping: RC connection, RDMA READ and RDMA WRITE check, wire-compatible
/// with rdma-core's rping, with latency statistics and bounded waits.

#include "fabric/cli.hpp"
#include "fabric/stats.hpp"

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
  int timeout_ms = 10000;       ///< --timeout
  int retry_ms = 0;             ///< --retry
  fabric::cli::output_options out;
};

/// Declares every option on `app`.
void add_options(CLI::App& app, options& opt);

/// One connection: the client's, or one a server served.
struct connection_result {
  std::string peer;
  std::uint64_t pings = 0;
  std::uint64_t verify_failures = 0;
  std::vector<double> rtt_us;          ///< per ping, microseconds
  std::vector<std::string> data;       ///< ping data, with -v
  std::string error;                   ///< empty when it ended cleanly
};

/// What a run produced; rendered by to_json and the human printer.
struct report {
  std::string role = "none";
  options opt;
  std::vector<connection_result> connections;
  std::uint64_t total_pings() const;
  std::uint64_t total_verify_failures() const;
};

/// The tool-specific JSON fields.
void to_json(nlohmann::json& j, const report& r);

/// The --stats line.
std::string format_stats(const connection_result& c);

/// Runs the client or server; fills `r` as it goes.
fabric::exit_code run(const options& opt, report& r);

}  // namespace rping
