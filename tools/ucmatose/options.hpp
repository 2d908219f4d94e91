#pragma once
/// ucmatose's command line: the options, their checks as a whole, and what
/// they say about a run (the address to resolve, the messages each way,
/// whether steps are timed). Owns nothing but values.

#include "fabric/verbs/addr.hpp"
#include "fabric/cli/cli.hpp"
#include "fabric/base/wait_limit.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ucmatose {

inline constexpr std::uint16_t default_port = 7471;

/// Command-line options (the original's short flags, uniform long names).
struct options {
  std::string server;                  ///< -s: server address; makes this the client
  std::string bind;                    ///< -b: local address
  std::string format = "name";         ///< -f: name, ip, ipv6 or gid
  std::string port_space = "tcp";      ///< -P: tcp or ib
  int connections = 1;                 ///< -c
  int count = 10;                      ///< -C: messages each way per connection
  int size = 100;                      ///< -S: message size
  std::uint16_t port = default_port;   ///< -p
  std::optional<int> ack_timeout;      ///< -a
  bool migrate = false;                ///< -m
  fabric::wait_limit timeout{std::chrono::milliseconds(10000)};  ///< --timeout
  bool verify = false;                 ///< --verify
  bool stats = false;                  ///< --stats
  fabric::cli::output_options out;

  // Read once, as -t is parsed.
  std::optional<std::uint8_t> tos;     ///< -t's value, read as rdma-core reads it
  std::vector<std::string> warnings;   ///< what reading it found, said on stderr as the run starts

  [[nodiscard]] bool client() const noexcept { return !server.empty(); }
  /// Whether each connection's steps are timed: only when they are
  /// reported (--stats, JSON), because a clock read can be a system call.
  [[nodiscard]] bool timed() const noexcept { return stats || out.mode() != fabric::output_mode::human; }
  /// Messages each way per connection; -S 0 means none, as in the original.
  [[nodiscard]] int messages() const noexcept { return size == 0 ? 0 : count; }
};

/// Declares every option on `app`.
void add_options(CLI::App& app, options& opt);

/// Checks the options as a whole (the buffers they ask for); throws a
/// usage error.
void validate(const options& opt);

/// The options object of the JSON document.
nlohmann::json options_json(const options& o);

/// What to resolve for `node` with the options' port, port space and
/// address format; `extra_flags` adds RAI_PASSIVE for a server.
fabric::addr_query address_query(const options& o, const std::string& node, int extra_flags);

}  // namespace ucmatose
