#pragma once
/// ucmatose: sets up many RC connections through rdma_cm, exchanges
/// messages on each and tears them down; wire-compatible with rdma-core's
/// ucmatose, with per-step timings (as cmtime reports them), bounded waits
/// and loss counts.

#include "fabric/cli.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ucmatose {

/// Command-line options (the original's short flags, uniform long names).
struct options {
  std::string server;          ///< -s: server address; makes this the client
  std::string bind;            ///< -b
  std::string format = "name"; ///< -f: name, ip, ipv6, gid
  std::string port_space = "tcp"; ///< -P: tcp, ib
  int connections = 1;         ///< -c
  int count = 10;              ///< -C
  int size = 100;              ///< -S
  int tos = -1;                ///< -t (-1: unset)
  std::string port = "7471";   ///< -p
  int ack_timeout = -1;        ///< -a (-1: unset)
  bool migrate = false;        ///< -m
  bool verify = false;         ///< --verify
  bool stats = false;          ///< --stats
  int timeout_ms = 10000;      ///< --timeout
  fabric::cli::output_options out;
};

void add_options(CLI::App& app, options& opt);

/// The connection steps timed, in order.
enum class step { create_id, resolve_addr, resolve_route, create_qp, connect, disconnect, destroy, count };
inline constexpr std::array<const char*, static_cast<std::size_t>(step::count)> step_names = {
    "create_id", "resolve_addr", "resolve_route", "create_qp", "connect", "disconnect", "destroy"};

/// One connection's outcome.
struct connection_result {
  int index = 0;
  bool connected = false;
  int sent = 0;
  int received = 0;
  int verify_failures = 0;
  std::array<double, static_cast<std::size_t>(step::count)> step_us{};  ///< -1: not reached
  std::string error;
  connection_result() { step_us.fill(-1); }
};

/// What a run produced.
struct report {
  std::string role = "none";
  options opt;
  std::vector<connection_result> connections;
  double connect_seconds = 0;  ///< from the first step to the last ESTABLISHED
};

/// min / mean / max of one step over the connections that reached it.
struct step_summary {
  int samples = 0;
  double min = 0, mean = 0, max = 0;
};
step_summary summarize_step(const report& r, step s);

/// Connections established per second of connection setup.
double connections_per_second(const report& r);

void to_json(nlohmann::json& j, const report& r);

/// The --stats lines: one per step, then the rate.
std::vector<std::string> format_stats(const report& r);

fabric::exit_code run(const options& opt, report& r);

}  // namespace ucmatose
