#pragma once
// udaddy: unreliable datagrams between a client and a server that meet
// through rdma_cm SIDR, wire-compatible with rdma-core's udaddy.

#include "fabric/cli.hpp"
#include "fabric/ud_report.hpp"

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace udaddy {

struct options {
  fabric::cli::output_options out;
  std::string server;              // -s: makes this run the client
  std::string bind;                // -b
  int connections = 1;             // -c
  int count = 10;                  // -C
  int size = 100;                  // -S
  std::string tos;                 // -t, strtoul base 0 like the original
  std::string port_space_number;   // -p, a number (0x111 udp, 0x2 ipoib)
  std::string port_space;          // -P udp|ipoib
  std::string format = "name";     // -f name|ip|ipv6|gid
  int port = 7174;                 // --port
  int timeout_ms = 10'000;         // --timeout: longest wait without progress
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

// state: pending, connected, failed.
struct connection_result : fabric::ud_result {
  std::optional<double> connect_ms;
};

struct report {
  std::string role = "none";       // client, server
  std::string server, bind;
  int port = 0;
  int connections = 0, count = 0, size = 0;
  std::optional<int> tos;
  std::string port_space;
  int timeout_ms = 0;
  bool verify = false;
  std::optional<std::uint32_t> mtu;
  std::vector<connection_result> results;
  std::optional<double> elapsed_ms;  // the data phase

  [[nodiscard]] fabric::ud_totals totals() const { return fabric::totals(results); }
  /// Messages both ways per second of the data phase.
  [[nodiscard]] std::optional<double> messages_per_second() const noexcept;
};

void to_json(nlohmann::json& j, const report& r);

/// Lines naming each connection that lost messages; empty when none did.
std::vector<std::string> loss_lines(const report& r);
/// The --stats summary lines.
std::vector<std::string> stats_lines(const report& r);
/// The verdict of a finished data phase: ok, or test_failed with the reason.
std::pair<fabric::exit_code, std::string> verdict(const report& r);

fabric::exit_code run(const options& opt, report& rep);

}  // namespace udaddy
