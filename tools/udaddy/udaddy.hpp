#pragma once
/// udaddy: unreliable datagrams between a client and a server that meet
/// through rdma_cm SIDR, wire-compatible with rdma-core's udaddy.

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

/// Command-line options (the original's short flags, uniform long names).
struct options {
  fabric::cli::output_options out;
  std::string server;              // -s: makes this run the client
  std::string bind;                // -b
  int connections = 1;             // -c
  int count = 10;                  // -C
  int size = 100;                  // -S
  std::string tos;                 // -t as given
  std::optional<fabric::cli::tos_reading> tos_read;  // -t as read, once, when parsed
  std::string port_space_number;   // -p, a number (0x111 udp, 0x2 ipoib)
  std::string port_space;          // -P udp|ipoib
  std::string format = "name";     // -f name|ip|ipv6|gid
  int port = 7174;                 // --port
  fabric::wait_limit timeout{std::chrono::milliseconds(10'000)};  // --timeout
  bool verify = false;             // --verify
  bool stats = false;              // --stats
};

void add_options(CLI::App& app, options& opt);

// What the textual options mean, checked before anything is opened.
struct address_format {
  int flags = 0;
  int family = AF_UNSPEC;
};
/// -f: name, ip, ipv6, gid.
std::optional<address_format> parse_format(const std::string& name);

/// The options in force as the document's options object; text options
/// that were not given are null, numbers are typed.
nlohmann::json options_json(const options& opt);

/// Checks the options as a whole (formats, port space, buffers);
/// throws a usage error.
void validate(const options& opt);

/// One connection; state: pending, connected, failed. setup_us is the
/// connection time.
struct connection_result : fabric::ud_result {
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
