#pragma once
/// ucmatose: many RC connections set up, used and torn down at once,
/// wire-compatible with rdma-core's ucmatose, with bounded waits, message
/// counts and per-step connection timings.

#include "fabric/cli.hpp"
#include "fabric/error.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ucmatose {

inline constexpr std::uint16_t default_port = 7471;

/// Command-line options (the original's short flags, uniform long names).
struct options {
  std::string server;              ///< -s: server address; makes this the client
  std::string bind;                ///< -b: local address
  std::string format = "name";     ///< -f: name, ip, ipv6 or gid
  std::string port_space = "tcp";  ///< -P: tcp or ib
  int connections = 1;             ///< -c
  int count = 10;                  ///< -C: messages each way per connection
  int size = 100;                  ///< -S: message size
  std::optional<int> tos;          ///< -t
  std::uint16_t port = default_port;  ///< -p
  std::optional<int> ack_timeout;  ///< -a
  bool migrate = false;            ///< -m
  int timeout_ms = 10000;          ///< --timeout: longest wait for any event
  bool verify = false;             ///< --verify
  bool stats = false;              ///< --stats
  fabric::cli::output_options out;

  [[nodiscard]] bool client() const noexcept { return !server.empty(); }
  /// Messages each way per connection; -S 0 means none, as in the original.
  [[nodiscard]] int messages() const noexcept { return size == 0 ? 0 : count; }
};

/// Declares every option on `app`.
void add_options(CLI::App& app, options& opt);

/// The timed steps of one connection, in the order they happen.
enum class step { create_id, resolve_addr, resolve_route, create_qp, connect, disconnect, destroy };
inline constexpr std::size_t step_count = 7;

/// "create_id", "resolve_addr", ... (JSON keys).
std::string_view step_key(step s) noexcept;
/// "create id", "resolve addr", ... (human table).
std::string_view step_label(step s) noexcept;

/// One connection's outcome.
struct connection_result {
  std::string peer;                ///< "10.0.0.1:7471"
  bool established = false;
  std::uint64_t sent = 0, received = 0, verify_failures = 0, unverified = 0;
  std::array<std::optional<double>, step_count> step_us{};  ///< absent: step not done
  std::string error;               ///< empty when it ended cleanly
};

/// min / mean / max of one step over the connections that did it.
struct step_summary {
  std::size_t count = 0;
  double min = 0, mean = 0, max = 0;
};

/// Summarises one step over all connections.
step_summary summarize_step(const std::vector<connection_result>& conns, step s);

/// What a run produced; rendered by to_json and format_stats.
struct report {
  std::string role = "none";
  options opt;
  std::vector<connection_result> connections;
  double setup_ms = 0;             ///< first id created (or request seen) to last ESTABLISHED
  [[nodiscard]] std::size_t established() const;
  [[nodiscard]] std::uint64_t expected() const;  ///< messages each way: established x -C
  [[nodiscard]] std::uint64_t sent() const;
  [[nodiscard]] std::uint64_t received() const;
  [[nodiscard]] std::uint64_t lost() const;      ///< expected - received
  [[nodiscard]] std::uint64_t verify_failures() const;
  [[nodiscard]] std::uint64_t unverified() const;
  [[nodiscard]] double connections_per_second() const;
};

/// The tool-specific JSON fields.
void to_json(nlohmann::json& j, const report& r);

/// The --stats lines: the step table, connection rate and message counts.
std::vector<std::string> format_stats(const report& r);

/// The verdict of a finished run: ok; connect_failed when a connection
/// was not established; test_failed when messages were lost or corrupted,
/// or a connection ended with an error. `why` says which.
fabric::exit_code verdict(const report& r, std::string& why);

/// Checks option combinations; throws error(usage).
void validate(const options& opt);

/// Runs the client or server; fills `r` as it goes.
fabric::exit_code run(const options& opt, report& r);

}  // namespace ucmatose
