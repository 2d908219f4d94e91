#pragma once
/// rping's command line: the options, their checks as a whole, and the
/// options object of the JSON document.

#include "fabric/cli/cli.hpp"
#include "fabric/base/wait_limit.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>

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

}  // namespace rping
